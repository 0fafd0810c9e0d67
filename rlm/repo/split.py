"""Cutting one file too big for a call into ranges: on function or class boundaries where it
can be parsed (Python's ``ast``; a regex on top-level declarations for common languages), else on
line boundaries. Ranges cover the file exactly, in order, without overlap."""

from __future__ import annotations

import ast
import re
from typing import Sequence

from rlm.corpus.chunk import REPO_NUMBER_WIDTH
from rlm.corpus.lines import numbered_cost


def _cost(lines: Sequence[str], a: int, b: int) -> int:
    return numbered_cost(lines, a, b, REPO_NUMBER_WIDTH)


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
