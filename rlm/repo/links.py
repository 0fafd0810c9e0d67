"""Test -> definition links, resolved through imports and types, not by a name's spelling.

For each test function, every call in its body is resolved by rlm.repo.infer in the test's own
scope (its module's imports with their aliases, its local assignments, `self` and `super()`):

- **verified**: code showed which repository definition runs (`from shelf import split as s;
  s(x)`, `r = FileReader(p); r.read()`, `client.get()` when `client = Client()` and `Client.get`
  is a method of that class or one of its bases);
- **inferred**: the called name matches repository definitions but code could not show which
  one runs; the link keeps its reason ("called as `client.get`: `client` is a parameter") and
  its candidates;
- **rejected**: the called name matches a repository definition, but code showed that
  something else runs: a builtin (`"a b".split()`, `d.get(k)`, `b"".join(x)`, `all(...)`),
  something imported from outside the repository (`Path.exists`), or a helper of the test file.

A bare-name matcher would have linked every rejected call and guessed every inferred one.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from rlm.repo.infer import (
    Builtin,
    Evaluator,
    Instance,
    Local,
    Method,
    ModuleScope,
    Super,
    Unknown,
)
from rlm.repo.scopes import Fixtures, FunctionScope
from rlm.repo.symbols import ClassInfo, Def, External, PackageIndex

MAX_CANDIDATES = 3


@dataclass
class Link:
    test: str  # `test_read` or `TestStore.test_get`
    path: str  # the test file
    line: int  # the call's line
    call: str  # the call as written: `client.get`
    status: str  # verified | inferred | rejected
    target: Def | None = None
    candidates: list[Def] = field(default_factory=list)
    reason: str = ""
    name_at: tuple[int, int] = (0, 0)  # line and column of the called name (for other tools)

    def as_dict(self) -> dict:
        return {"test": self.test, "path": self.path, "line": self.line, "call": self.call,
                "status": self.status, "target": self.target.where if self.target else None,
                "target_name": self.target.qualname if self.target else None,
                "candidates": [c.where for c in self.candidates], "reason": self.reason}


@dataclass
class TestLinks:
    name: str
    path: str
    line_start: int
    line_end: int
    links: list[Link] = field(default_factory=list)

    def of(self, status: str) -> list[Link]:
        return [x for x in self.links if x.status == status]


def _call_name(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


class LinkResolver:
    """Resolve the calls of test functions against a PackageIndex; ``package_paths`` are the
    files whose definitions a link may point to (not tests)."""

    def __init__(self, index: PackageIndex, package_paths: set[str],
                 fixtures: Fixtures | None = None):
        self.index, self.package_paths, self.fixtures = index, package_paths, fixtures

    def _named(self, name: str, bare: bool = False) -> list[Def]:
        """Package definitions spelled `name`; for a bare call (`split(x)`), only functions and
        classes: a method is never called by its bare name."""
        if not name or (name.startswith("__") and name.endswith("__")):
            return []
        return [d for d in self.index.names.get(name, []) if d.path in self.package_paths
                and not (bare and d.kind == "method")]

    def test_links(self, rel: str, tree: ast.Module) -> list[TestLinks]:
        m = self.index.by_path.get(rel)
        if m is None:
            return []
        assigns: dict[str, list[ast.expr]] = {}
        for node in tree.body:
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        assigns.setdefault(t.id, []).append(node.value)
        mod_scope = ModuleScope(self.index, m, assigns)
        out = []
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
                out.append(self._test(rel, mod_scope, node, None, node.name))
            elif isinstance(node, ast.ClassDef) and node.name in m.classes:
                cls = m.classes[node.name]
                for sub in node.body:
                    if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)) and sub.name.startswith("test"):
                        out.append(self._test(rel, mod_scope, sub, cls, f"{node.name}.{sub.name}"))
        return out

    def _test(self, rel: str, outer: ModuleScope, fn, cls: ClassInfo | None, name: str) -> TestLinks:
        scope = FunctionScope(outer, fn, cls, self.fixtures)
        ev = Evaluator(scope, cls)
        tl = TestLinks(name, rel, fn.lineno, fn.end_lineno or fn.lineno)
        seen: set[tuple] = set()
        for node in (n for stmt in fn.body for n in ast.walk(stmt)):  # the body, not decorators
            if not isinstance(node, ast.Call):
                continue
            link = self.classify(ev, node.func, rel, name)
            if link is None:
                continue
            key = (link.status, link.target, link.call if link.target is None else "")
            if key not in seen:
                seen.add(key)
                tl.links.append(link)
        return tl

    def classify(self, ev: Evaluator, func: ast.expr, rel: str, test: str) -> Link | None:
        """One call: verified, inferred or rejected; None when it names no repository
        definition and resolves to none (nothing a bare-name matcher would have said)."""
        name = _call_name(func)
        text = ast.unparse(func)[:60]
        v = ev.value(func)

        def link(status: str, target: Def | None = None, reason: str = "", cands=()) -> Link:
            return Link(test, rel, func.lineno, text, status, target, list(cands), reason,
                        (func.end_lineno or func.lineno, (func.end_col_offset or 0) - len(name)))

        target = v.d if isinstance(v, (Method, ClassInfo)) else v if isinstance(v, Def) else None
        if target is not None:
            if target.path in self.package_paths:
                how = v.via if isinstance(v, Method) else "through the module's imports"
                return link("verified", target, f"`{text}` resolves to `{target.qualname}` ({how})")
            return link("rejected", None, f"`{text}` is `{target.qualname}` in {target.path}, "
                        "not a package definition") if self._named(name, isinstance(func, ast.Name)) else None
        named = self._named(name, bare=isinstance(func, ast.Name))
        if not named:
            return None
        if isinstance(v, Unknown):
            cands = [d for d in named if (d.kind != "class") or isinstance(func, ast.Name)]
            if not cands:
                return None
            return link("inferred", None, f"called as `{text}`: {v.reason}",
                        cands[:MAX_CANDIDATES])
        return link("rejected", None, f"`{text}` is {self._what(v)}, not the package's "
                    + ", ".join(f"`{d.qualname}`" for d in named[:MAX_CANDIDATES]))

    @staticmethod
    def _what(v) -> str:
        if isinstance(v, Builtin):
            return (f"`{v.spelled()}`, a builtin method" if v.attr else
                    f"the builtin `{v.type_name}`")
        if isinstance(v, External):
            return f"`{v.dotted}` from outside the repository"
        if isinstance(v, Local):
            return f"`{v.name}`, defined in the test file"
        if isinstance(v, (Instance, Super)):
            return "an object, not a function"
        return type(v).__name__.lower()


def build_resolver(trees: dict[str, ast.Module], is_test, root_package: str = ""
                   ) -> LinkResolver:
    index = PackageIndex()
    for rel, tree in trees.items():
        index.add(rel, tree, root_package, index_defs=not is_test(rel))
    return LinkResolver(index, {rel for rel in trees if not is_test(rel)},
                        Fixtures(index, {r: t for r, t in trees.items() if is_test(r)}))


def resolve_test_links(trees: dict[str, ast.Module], is_test, root_package: str = ""
                       ) -> list[TestLinks]:
    """Index every parsed file (``rel -> tree``), then resolve each test file's tests.
    ``root_package`` names the root when it is itself a package (an installed one)."""
    resolver = build_resolver(trees, is_test, root_package)
    out: list[TestLinks] = []
    for rel, tree in trees.items():
        if is_test(rel):
            out.extend(resolver.test_links(rel, tree))
    return out


def link_counts(tests: list[TestLinks]) -> dict[str, int]:
    counts = {"verified": 0, "inferred": 0, "rejected": 0}
    for t in tests:
        for x in t.links:
            counts[x.status] += 1
    return counts
