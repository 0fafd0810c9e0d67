"""Chunking code for the repository recipes (audit, mine): modules, files, functions, lines.

A module (a folder, see :func:`rlm.corpus.walk.group_modules`) that fits one call is one
chunk. A module too large for one call is split by files (whole files packed in order); a file
too large for one call is split on function or class boundaries where it can be parsed
(Python's ``ast`` for ``.py``; a regex on top-level declarations for common languages), else on
line boundaries. Pieces cover their file exactly, in order, without overlap.

Every chunk's text carries the file path and the original 1-based line numbers, so a model can
cite ``path:start-end`` and code can check it (:mod:`rlm.evidence`). Lines longer than
``MAX_LINE_CHARS`` are shown cut (the cut is marked and counted); the evidence check always
reads the real file.

Pure code: no model calls.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from rlm.corpus.walk import FileEntry, Module
from rlm.corpus.lines import CUT_MARK, MAX_LINE_CHARS, number_lines, read_lines
from rlm.evidence import safe_resolve

__all__ = [
    "MAX_LINE_CHARS",
    "Part",
    "RepoChunk",
    "DOC_EXTENSIONS",
    "is_doc_file",
    "is_test_file",
    "file_lines",
    "numbered",
    "split_file",
    "chunk_modules",
    "chunk_files",
    "doc_lines",
    "block_end",
]

NUMBER_WIDTH = 5  # "  12| "

DOC_EXTENSIONS = frozenset({
    ".md", ".markdown", ".rst", ".txt", ".adoc", ".asciidoc", ".org", ".rdoc", ".textile",
    ".html", ".htm",
})
DOC_NAMES = frozenset({"readme", "changelog", "changes", "history", "license", "licence",
                       "copying", "authors", "contributors", "notice", "news", "todo"})


def is_doc_file(path: str) -> bool:
    """Documentation rather than code: prose formats and the usual top-level prose files."""
    name = path.rsplit("/", 1)[-1].lower()
    stem, dot, ext = name.rpartition(".")
    if dot and "." + ext in DOC_EXTENSIONS:
        return True
    if dot and stem:
        return False
    return name in DOC_NAMES or "/docs/" in f"/{path.lower()}"


def is_test_file(path: str) -> bool:
    p = path.lower()
    name = p.rsplit("/", 1)[-1]
    return (p.startswith(("tests/", "test/")) or "/tests/" in p or "/test/" in p
            or name.startswith("test_") or name.endswith(("_test.py", "_test.go", ".test.js",
                                                           ".test.ts", ".spec.js", ".spec.ts")))


def file_lines(root: Path, rel: str) -> tuple[str, ...]:
    """The lines of ``rel`` inside ``root`` (safely resolved; cached by rlm.evidence)."""
    return read_lines(safe_resolve(root, rel))


# ------------------------------------------------------------------------------ numbering


def numbered(path: str, lines: Sequence[str], start: int, end: int, total: int | None = None,
             cap: int = MAX_LINE_CHARS) -> tuple[str, int]:
    """The text of lines start..end (1-based, inclusive) of ``path`` with a header and original
    line numbers: ``### path (lines 1-40 of 40)`` then ``  12| text``. Returns (text, cut
    lines)."""
    total = len(lines) if total is None else total
    body, cuts = number_lines(lines[start - 1:end], start, width=NUMBER_WIDTH - 2, max_chars=cap)
    return f"### {path} (lines {start}-{end} of {total})\n{body}", cuts


def _cost(lines: Sequence[str], a: int, b: int) -> int:
    """Characters of lines a..b once numbered (what they cost in a prompt)."""
    return sum(min(len(lines[i - 1]), MAX_LINE_CHARS + len(CUT_MARK)) + NUMBER_WIDTH + 1
               for i in range(a, b + 1))


# ------------------------------------------------------------------------------ splitting


def _pack(segments: list[tuple[int, int]], lines: Sequence[str], max_chars: int,
          oversized) -> list[tuple[int, int]]:
    """Greedily pack consecutive segments into ranges of at most max_chars; a segment larger
    than max_chars alone goes to ``oversized(a, b)``, which returns ranges."""
    out: list[tuple[int, int]] = []
    cur: tuple[int, int] | None = None
    cur_cost = 0
    for a, b in segments:
        c = _cost(lines, a, b)
        if c > max_chars:
            if cur:
                out.append(cur)
                cur, cur_cost = None, 0
            out.extend(oversized(a, b))
            continue
        if cur and cur_cost + c <= max_chars:
            cur = (cur[0], b)
            cur_cost += c
        else:
            if cur:
                out.append(cur)
            cur, cur_cost = (a, b), c
    if cur:
        out.append(cur)
    return out


def split_lines(lines: Sequence[str], a: int, b: int, max_chars: int) -> list[tuple[int, int]]:
    """Ranges of whole lines (a..b) of at most max_chars each (a single longer line alone)."""
    out: list[tuple[int, int]] = []
    start = a
    cost = 0
    for n in range(a, b + 1):
        c = _cost(lines, n, n)
        if n > start and cost + c > max_chars:
            out.append((start, n - 1))
            start, cost = n, 0
        cost += c
    if start <= b:
        out.append((start, b))
    return out


def _segments(bounds: list[int], a: int, b: int) -> list[tuple[int, int]]:
    """Segments a..b cut before each boundary line (boundaries inside (a, b])."""
    cuts = sorted({x for x in bounds if a < x <= b})
    out: list[tuple[int, int]] = []
    start = a
    for x in cuts:
        out.append((start, x - 1))
        start = x
    out.append((start, b))
    return out


def _node_start(node: ast.AST) -> int:
    decos = getattr(node, "decorator_list", None) or []
    return min([node.lineno] + [d.lineno for d in decos])  # type: ignore[attr-defined]


def _leading_comments(lines: Sequence[str], start: int, floor: int) -> int:
    """Move a node's start up over the comment lines directly above it (not past floor)."""
    s = start
    while s - 1 > floor and lines[s - 2].lstrip().startswith("#"):
        s -= 1
    return s


def _split_python(lines: Sequence[str], max_chars: int) -> list[tuple[int, int]] | None:
    text = "\n".join(lines)
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    n = len(lines)

    def split_body(body: list[ast.stmt], a: int, b: int) -> list[tuple[int, int]]:
        bounds = []
        prev = a - 1
        for node in body:
            s = _leading_comments(lines, _node_start(node), prev)
            bounds.append(s)
            prev = getattr(node, "end_lineno", None) or node.lineno
        segs = _segments(bounds, a, b)

        def oversized(x: int, y: int) -> list[tuple[int, int]]:
            # a class (or function) too big: split on its own statements
            for node in body:
                ns = _node_start(node)
                ne = getattr(node, "end_lineno", None) or node.lineno
                if x <= ns and ne <= y and isinstance(
                        node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
                    inner = split_body(node.body, x, y)
                    if len(inner) > 1:
                        return inner
            return split_lines(lines, x, y, max_chars)

        return _pack(segs, lines, max_chars, oversized)

    if not tree.body:
        return split_lines(lines, 1, n, max_chars)
    return split_body(tree.body, 1, n)


# Top-level declarations in common languages (JS/TS, Go, Rust, Java/C#/Kotlin, C/C++, Ruby, PHP,
# shell). Only lines indented by at most 4 columns count as boundaries.
_DECL = re.compile(
    r"^(?:[ ]{0,4}|\t?)(?:export\s+(?:default\s+)?)?(?:pub(?:\([^)]*\))?\s+)?"
    r"(?:(?:public|private|protected|internal|static|final|abstract|async|override|inline|"
    r"unsafe|extern|virtual|sealed|open|data)\s+)*"
    r"(?:function\*?|class|interface|struct|enum|trait|impl|fn|func|def|module|namespace|type|"
    r"object|record|const\s+\w+\s*=\s*(?:async\s*)?\(|let\s+\w+\s*=\s*(?:async\s*)?\(|"
    r"[A-Za-z_][\w<>,\s\[\]*&:]*\s+\**\w+\s*\([^;]*\)\s*\{?\s*$)\b")


def _split_regex(lines: Sequence[str], max_chars: int) -> list[tuple[int, int]]:
    n = len(lines)
    bounds = [i + 1 for i, s in enumerate(lines) if _DECL.match(s)]
    # a comment block directly above a declaration goes with it
    adj = []
    for x in bounds:
        s = x
        while s - 1 >= 1 and lines[s - 2].lstrip().startswith(("//", "#", "/*", "*", "///")):
            s -= 1
        adj.append(s)
    segs = _segments(adj, 1, n)
    return _pack(segs, lines, max_chars, lambda a, b: split_lines(lines, a, b, max_chars))


REGEX_EXTENSIONS = frozenset({
    ".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx", ".go", ".rs", ".java", ".kt", ".kts", ".scala",
    ".cs", ".c", ".h", ".cc", ".cpp", ".hpp", ".cxx", ".m", ".mm", ".swift", ".rb", ".php",
    ".sh", ".bash", ".zsh", ".lua", ".dart", ".ex", ".exs", ".pl", ".pm",
})


def split_file(path: str, lines: Sequence[str], max_chars: int) -> tuple[list[tuple[int, int]], str]:
    """Ranges covering all lines of a file, each at most max_chars once numbered (a single
    over-long line alone), and how they were cut: "whole", "ast", "declarations" or "lines"."""
    n = len(lines)
    if n == 0:
        return [], "whole"
    if _cost(lines, 1, n) <= max_chars:
        return [(1, n)], "whole"
    low = path.lower()
    if low.endswith((".py", ".pyi")):
        r = _split_python(lines, max_chars)
        if r is not None:
            return r, "ast"
    if "." + low.rsplit(".", 1)[-1] in REGEX_EXTENSIONS:
        return _split_regex(lines, max_chars), "declarations"
    return split_lines(lines, 1, n, max_chars), "lines"


# ------------------------------------------------------------------------------ chunks


@dataclass(frozen=True)
class Part:
    """Lines start..end (1-based, inclusive) of one file."""

    path: str
    start: int
    end: int

    @property
    def lines(self) -> int:
        return self.end - self.start + 1

    def ref(self) -> str:
        return f"{self.path}:{self.start}-{self.end}"


@dataclass
class RepoChunk:
    """One isolated call's material: whole files or parts of one file, numbered."""

    id: str
    module: str
    parts: list[Part]
    text: str
    how: str = "whole"  # "whole" files, or how a big file was cut ("ast", "declarations", "lines")
    cut_lines: int = 0  # over-long lines shown cut
    nbytes: int = 0
    meta: dict = field(default_factory=dict)

    @property
    def paths(self) -> list[str]:
        return list(dict.fromkeys(p.path for p in self.parts))

    @property
    def lines(self) -> int:
        return sum(p.lines for p in self.parts)

    def describe(self) -> str:
        if len(self.parts) == 1:
            p = self.parts[0]
            return f"{p.path} lines {p.start}-{p.end}"
        return f"module {self.module}: {len(self.parts)} files"

    def shows(self, path: str, a: int, b: int, slack: int = 0) -> bool:
        """Whether lines a..b of path overlap what this chunk shows (± slack lines)."""
        return any(p.path == path and a <= p.end + slack and b >= p.start - slack
                   for p in self.parts)


def _make_chunk(cid: str, module: str, root: Path, parts: list[Part], how: str,
                lines_of) -> RepoChunk:
    texts = []
    cuts = 0
    nbytes = 0
    for p in parts:
        ls = lines_of(p.path)
        t, c = numbered(p.path, ls, p.start, p.end, len(ls))
        texts.append(t)
        cuts += c
        nbytes += sum(len(ls[i - 1].encode("utf-8", "replace")) + 1 for i in range(p.start, p.end + 1))
    return RepoChunk(cid, module, parts, "\n\n".join(texts), how, cuts, nbytes)


def chunk_files(root: Path, module: str, files: Iterable[FileEntry | str], max_chars: int,
                id_prefix: str = "c", start_index: int = 1,
                lines_of=None) -> list[RepoChunk]:
    """Chunks for some files of one module: whole files packed in order while they fit
    ``max_chars``; a file too big alone is split (see :func:`split_file`), one chunk per piece.
    Empty files are left out (the caller reports them)."""
    root = Path(root)
    lines_of = lines_of or (lambda rel: file_lines(root, rel))
    out: list[RepoChunk] = []
    pending: list[Part] = []
    pending_cost = 0
    idx = start_index

    def next_id() -> str:
        nonlocal idx
        cid = f"{id_prefix}{idx:04d}"
        idx += 1
        return cid

    def flush() -> None:
        nonlocal pending, pending_cost
        if pending:
            out.append(_make_chunk(next_id(), module, root, pending, "whole", lines_of))
            pending, pending_cost = [], 0

    for fe in files:
        rel = fe if isinstance(fe, str) else fe.path
        ls = lines_of(rel)
        n = len(ls)
        if n == 0:
            continue
        cost = _cost(ls, 1, n) + len(rel) + 40
        if cost <= max_chars:
            if pending and pending_cost + cost > max_chars:
                flush()
            pending.append(Part(rel, 1, n))
            pending_cost += cost
            continue
        flush()
        ranges, how = split_file(rel, ls, max(200, max_chars - len(rel) - 40))
        for a, b in ranges:
            out.append(_make_chunk(next_id(), module, root, [Part(rel, a, b)], how, lines_of))
    flush()
    return out


def chunk_modules(root: Path, modules: list[Module], max_chars: int,
                  id_prefix: str = "c", lines_of=None) -> list[RepoChunk]:
    """One chunk per module when it fits; else split by files, and big files by functions."""
    out: list[RepoChunk] = []
    for m in modules:
        out.extend(chunk_files(root, m.name, m.files, max_chars, id_prefix,
                               start_index=len(out) + 1, lines_of=lines_of))
    return out


# ------------------------------------------------------------------------------ code facts


_COMMENT_PREFIXES = ("#", "//", "/*", "*", "--", ";", "<!--", "%")


def doc_lines(path: str, lines: Sequence[str]) -> set[int]:
    """1-based numbers of the lines that are prose rather than code: every line of a
    documentation file; comment lines; and, in Python, docstrings (found with ast)."""
    n = len(lines)
    if is_doc_file(path):
        return set(range(1, n + 1))
    out = {i + 1 for i, s in enumerate(lines) if s.strip().startswith(_COMMENT_PREFIXES)}
    if path.lower().endswith((".py", ".pyi")):
        try:
            tree = ast.parse("\n".join(lines))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return out
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                body = getattr(node, "body", None)
                if body and isinstance(body[0], ast.Expr) and isinstance(
                        getattr(body[0], "value", None), ast.Constant) and isinstance(
                        body[0].value.value, str):
                    d = body[0]
                    out.update(range(d.lineno, (d.end_lineno or d.lineno) + 1))
    return out


def block_end(path: str, lines: Sequence[str], start: int, cap: int = 15) -> int:
    """For a def/class (or other declaration) starting at ``start``: the last line of its
    block, at most ``cap`` lines on; otherwise ``start``. Python by indentation; braces
    languages by the first line back at the declaration's indentation."""
    n = len(lines)
    head = lines[start - 1]
    indent = len(head) - len(head.lstrip())
    end = start
    for i in range(start + 1, min(n, start + cap) + 1):
        s = lines[i - 1]
        if not s.strip():
            continue
        ind = len(s) - len(s.lstrip())
        if ind <= indent:
            if path.lower().endswith((".py", ".pyi")) or not s.strip().startswith(("}", ")", "end")):
                break
            end = i
            break
        end = i
    return end
