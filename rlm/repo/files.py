"""Facts about a repository's files, by code: which are prose or tests, their lines, which
lines are comments or docstrings, where a definition's block ends. (How their lines are shown
to a model: rlm.corpus.chunk, through the one renderer in rlm.corpus.lines.) Pure code.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Sequence

from rlm.corpus.lines import read_lines
from rlm.verify.evidence import safe_resolve

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
    """The lines of ``rel`` inside ``root`` (safely resolved; cached by rlm.verify.evidence)."""
    return read_lines(safe_resolve(root, rel))


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
