"""What issue 8 made one stays one: one chunk type, one numbered-line renderer, one set of
window-sizing constants, modules and functions of a readable size. Read from the source with
ast, so a second copy creeping back in fails here."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "rlm"
SIZING = ("PROMPT_OVERHEAD_TOKENS", "MAX_LINE_CHARS", "CUT_MARK", "CODE_CHARS_PER_TOKEN",
          "CHUNK_FILL")


def _modules():
    for p in sorted(ROOT.rglob("*.py")):
        yield p.relative_to(ROOT.parent).as_posix(), ast.parse(p.read_text("utf-8"))


def test_window_and_line_constants_are_defined_once():
    where: dict[str, list[str]] = {}
    for rel, tree in _modules():
        for node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else (
                [node.target] if isinstance(node, ast.AnnAssign) else [])
            for t in targets:
                if isinstance(t, ast.Name) and t.id in SIZING:
                    where.setdefault(t.id, []).append(rel)
    assert {k: v for k, v in where.items() if len(v) != 1} == {}
    assert set(where) == set(SIZING)


def test_only_the_one_renderer_prints_numbered_lines():
    """An f-string that prints `{n}| ...` (a line number, then "| ") outside rlm/corpus/lines.py
    is a second renderer."""
    found = []
    for rel, tree in _modules():
        if rel == "rlm/corpus/lines.py":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.JoinedStr):
                vals = node.values
                for a, b in zip(vals, vals[1:]):
                    if (isinstance(a, ast.FormattedValue) and isinstance(b, ast.Constant)
                            and isinstance(b.value, str) and b.value.startswith("| ")):
                        found.append(f"{rel}:{node.lineno}")
    assert found == []


def test_one_chunk_type():
    chunk_classes = [f"{rel}:{n.name}" for rel, tree in _modules() for n in ast.walk(tree)
                     if isinstance(n, ast.ClassDef) and n.name.endswith("Chunk")
                     and n.name != "FailedChunk"]  # FailedChunk: a coverage entry, not a chunk
    assert chunk_classes == ["rlm/corpus/chunk.py:Chunk"]


def test_markdown_is_drawn_only_by_the_rendering_package():
    """The library returns data; rlm/render/ draws it (the answer's own parts, such as code's
    ranked passages, are answer text and stay with the code that finds them)."""
    drawn = [f"{rel}:{n.name}" for rel, tree in _modules() for n in ast.walk(tree)
             if isinstance(n, ast.FunctionDef) and n.name.endswith("_markdown")
             and not rel.startswith("rlm/render/")]
    assert drawn == ["rlm/pipeline/codeonly/answers.py:passages_markdown"]


def test_modules_and_functions_stay_readable():
    long_modules = [rel for rel, _ in _modules()
                    if (ROOT.parent / rel).read_text("utf-8").count("\n") > 400]
    long_functions = [f"{rel}:{n.name}" for rel, tree in _modules() for n in ast.walk(tree)
                      if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                      and n.end_lineno - n.lineno + 1 > 80]
    assert long_modules == [] and long_functions == []
