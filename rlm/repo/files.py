"""Facts about a repository's files, by code: which are prose or tests, their lines, the
numbered rendering every repository prompt uses (``### path (lines a-b of n)`` then
``  12| text``), which lines are comments or docstrings, where a definition's block ends.

Lines longer than ``MAX_LINE_CHARS`` (rlm.corpus.lines, the one line renderer) are shown cut
(the cut is marked and counted); the evidence check always reads the real file. Pure code.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Sequence

from rlm.corpus.lines import CUT_MARK, MAX_LINE_CHARS, number_lines, read_lines
from rlm.evidence import safe_resolve

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


def numbered_cost(lines: Sequence[str], a: int, b: int) -> int:
    """Characters of lines a..b once numbered (what they cost in a prompt)."""
    return sum(min(len(lines[i - 1]), MAX_LINE_CHARS + len(CUT_MARK)) + NUMBER_WIDTH + 1
               for i in range(a, b + 1))



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
