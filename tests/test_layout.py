"""The package shows the design (issue 18): nothing loose at the top of rlm/, and no tree edits
sys.path to reach another (tests import `evals` and `fixtures` by
name because pytest puts the checkout on sys.path for the `tests` package)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the only modules at rlm/'s top level; the README's Layout section names each
TOP_LEVEL = {"__init__", "api", "errors", "words"}


def test_no_loose_module_at_the_top_of_rlm():
    found = {p.stem for p in (ROOT / "rlm").glob("*.py")}
    assert found == TOP_LEVEL
    readme = (ROOT / "README.md").read_text("utf-8")
    assert all(f"`{m}`" in readme for m in TOP_LEVEL - {"__init__"})


def _edits_sys_path(tree: ast.AST) -> list[int]:
    """Lines that change sys.path: sys.path.insert/append/extend/remove, or assigning to it."""
    lines = []
    for node in ast.walk(tree):
        target = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            target = node.func.value if node.func.attr in ("insert", "append", "extend",
                                                           "remove") else None
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            target = next((t for t in targets if ast.unparse(t).startswith("sys.path")), None)
        if target is not None and ast.unparse(target).startswith("sys.path"):
            lines.append(node.lineno)
    return sorted(lines)


def test_no_tree_edits_sys_path():
    edits = {}
    for tree in ("rlm", "evals", "tests", "fixtures"):
        for p in (ROOT / tree).rglob("*.py"):
            found = _edits_sys_path(ast.parse(p.read_text("utf-8")))
            if found:
                edits[str(p.relative_to(ROOT))] = found
    assert edits == {}


def test_the_sys_path_check_sees_an_edit():
    code = "import sys\nsys.path.insert(0, 'x')\nsys.path += ['y']\nsys.path.sort()\n"
    assert _edits_sys_path(ast.parse(code)) == [2, 3]
