"""The import graph of rlm/ has no cycle, counting the imports inside functions too (a late
import hides a cycle from the module-level view, it does not remove it); only imports under
`if TYPE_CHECKING:` are left out, since they never run."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "rlm"


def _module(p: Path, root: Path = ROOT) -> str:
    parts = list(p.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_only(tree: ast.AST) -> set[int]:
    """ids of the import nodes under `if TYPE_CHECKING:`."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return skip


def _imported(node: ast.AST, pkg: str) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            base = ".".join(pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                            + ([base] if base else []))
        return [base] + [f"{base}.{a.name}" for a in node.names]
    return []


def graph(root: Path = ROOT) -> dict[str, set[str]]:
    mods = {_module(p, root): p for p in root.rglob("*.py")}
    g: dict[str, set[str]] = {m: set() for m in mods}
    for m, p in mods.items():
        pkg = m if p.name == "__init__.py" else m.rsplit(".", 1)[0]
        tree = ast.parse(p.read_text("utf-8"))
        skip = _type_checking_only(tree)
        for node in ast.walk(tree):  # every import, module level or inside a function
            if id(node) in skip:
                continue
            for n in _imported(node, pkg):
                # a package's own parents are already importing when it runs: not a loop
                if n in mods and n != m and not m.startswith(n + "."):
                    g[m].add(n)
    return g


def cycle(g: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for n in sorted(g[m]):
            if state.get(n) == 1:
                return stack[stack.index(n):] + [n]
            if n not in state:
                found = visit(n)
                if found:
                    return found
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(g):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


def test_the_rlm_import_graph_has_no_cycle():
    g = graph()
    assert len(g) > 50  # the walk found the package
    assert cycle(g) is None, " -> ".join(cycle(g) or [])


def test_the_checker_sees_a_cycle():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set()}) is None


def test_the_graph_sees_imports_inside_functions_but_not_type_checking(tmp_path):
    pkg = tmp_path / "rlm"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from rlm import b\n")
    (pkg / "b.py").write_text("from typing import TYPE_CHECKING\n"
                              "if TYPE_CHECKING:\n    from rlm.a import f\n"
                              "def g():\n    import rlm.c\n")
    (pkg / "c.py").write_text("")
    g = graph(pkg)
    assert g["rlm.a"] == {"rlm.b"} and g["rlm.b"] == {"rlm.c"}
