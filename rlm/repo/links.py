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
    agree,
    unwrap_optional,
)
from rlm.repo.symbols import ClassInfo, Def, External, ModuleInfo, PackageIndex

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


class _FunctionScope:
    """Names bound inside one function (and anything nested in it), then the module's."""

    def __init__(self, outer: ModuleScope, fn: ast.FunctionDef | ast.AsyncFunctionDef,
                 self_cls: ClassInfo | None):
        self.index, self.outer, self.self_cls = outer.index, outer, self_cls
        self.bindings: dict[str, list] = {}
        self._busy: set[str] = set()
        self._collect(fn)

    def _bind(self, name: str, how) -> None:
        self.bindings.setdefault(name, []).append(how)

    def _collect(self, fn) -> None:
        args = fn.args
        for i, a in enumerate([*args.posonlyargs, *args.args]):
            if i == 0 and self.self_cls is not None and a.arg in ("self", "cls"):
                self._bind(a.arg, ("value", Instance(self.self_cls)))
            else:
                self._bind(a.arg, ("ann", a.annotation) if a.annotation is not None else
                           ("value", Unknown(f"`{a.arg}` is a parameter (a pytest fixture or an "
                                             "argument): its type is not in the code")))
        for a in [*args.kwonlyargs, *(x for x in (args.vararg, args.kwarg) if x)]:
            self._bind(a.arg, ("value", Unknown(f"`{a.arg}` is a parameter")))
        for node in ast.walk(fn):
            self._collect_node(node, fn)

    def _collect_node(self, node: ast.AST, fn) -> None:
        if isinstance(node, ast.Assign):
            for t in node.targets:
                self._target(t, ("expr", node.value))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            self._bind(node.target.id, ("ann", node.annotation))
        elif isinstance(node, (ast.AugAssign, ast.For, ast.AsyncFor, ast.comprehension)):
            self._target(node.target, ("value", Unknown("a loop or augmented variable")))
        elif isinstance(node, ast.NamedExpr):
            self._target(node.target, ("expr", node.value))
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is not None:
                    self._target(item.optional_vars, ("enter", item.context_expr))
        elif isinstance(node, ast.ExceptHandler) and node.name:
            self._bind(node.name, ("value", Unknown("an exception caught")))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not fn:
            self._bind(node.name, ("value", Local(node.name)))
            if not isinstance(node, ast.ClassDef):
                for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
                    self._bind(a.arg, ("value", Unknown(f"`{a.arg}` is a nested parameter")))
        elif isinstance(node, ast.Lambda):
            for a in node.args.args:
                self._bind(a.arg, ("value", Unknown(f"`{a.arg}` is a lambda parameter")))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            scratch = ModuleInfo(self.outer.m.name, self.outer.m.path, self.outer.m.is_package)
            self.index._top(scratch, node, index_defs=False)
            for alias, target in scratch.imports.items():
                self._bind(alias, ("import", target))
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for n in node.names:
                self._bind(n, ("value", Unknown(f"`{n}` is declared global")))

    def _target(self, t: ast.expr, how) -> None:
        if isinstance(t, ast.Name):
            self._bind(t.id, how)
        elif isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                self._target(e.value if isinstance(e, ast.Starred) else e,
                             ("value", Unknown("unpacked from a tuple")))

    def lookup(self, name: str):
        if name not in self.bindings:
            return self.outer.lookup(name)
        if name in self._busy:
            return Unknown(f"`{name}` is defined from itself")
        self._busy.add(name)
        try:
            return agree([self._value(how) for how in self.bindings[name]], name)
        finally:
            self._busy.discard(name)

    def _value(self, how):
        kind, x = how
        ev = Evaluator(self, self.self_cls)
        if kind == "value":
            return x
        if kind == "import":
            got = self.index.imported(*x)
            return got if got is not None else Unknown("an import code could not follow")
        if kind == "ann":
            v = ev.value(unwrap_optional(x))
            return Instance(v) if isinstance(v, ClassInfo) else Unknown(
                f"annotated `{ast.unparse(x)[:40]}`")
        if kind == "enter":
            made = self._yielded(ev, x)
            if made is not None:
                return made
            ctx = ev.value(x)
            if isinstance(ctx, Instance):
                if ctx.cls.enter_returns_self:
                    return ctx
                enter = ev.method(ctx.cls, "__enter__", "")
                if isinstance(enter, Method):
                    return ev.returned(enter.d)
            return Unknown(f"`with {ast.unparse(x)[:40]} as ...`: what __enter__ returns is "
                           "not known")
        return ev.value(x)

    def _yielded(self, ev: Evaluator, x: ast.expr):
        """`with f() as v` where f is a @contextmanager annotated `-> Iterator[X]`: v is an X."""
        if not isinstance(x, ast.Call):
            return None
        f = ev.value(x.func)
        d = f.d if isinstance(f, Method) else f if isinstance(f, Def) else None
        m = self.index.modules.get(d.module) if d else None
        if d is None or m is None:
            return None
        if d.kind == "method":
            cls_name, name = d.qualname.split(".", 1)
            c = m.classes.get(cls_name)
            ann = c.returns.get(name) if c and name in c.context_managers else None
        else:
            ann = m.returns.get(d.name) if d.name in m.context_managers else None
        if not isinstance(ann, ast.Subscript):
            return None
        first = ann.slice.elts[0] if isinstance(ann.slice, ast.Tuple) else ann.slice
        v = Evaluator(ModuleScope(self.index, m)).value(unwrap_optional(first))
        return Instance(v) if isinstance(v, ClassInfo) else None


def _call_name(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


class LinkResolver:
    """Resolve the calls of test functions against a PackageIndex; ``package_paths`` are the
    files whose definitions a link may point to (not tests)."""

    def __init__(self, index: PackageIndex, package_paths: set[str]):
        self.index, self.package_paths = index, package_paths

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
        scope = _FunctionScope(outer, fn, cls)
        ev = Evaluator(scope, cls)
        tl = TestLinks(name, rel, fn.lineno, fn.end_lineno or fn.lineno)
        seen: set[tuple] = set()
        for node in ast.walk(fn):
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
            return Link(test, rel, func.lineno, text, status, target, list(cands), reason)

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


def resolve_test_links(trees: dict[str, ast.Module], is_test, root_package: str = ""
                       ) -> list[TestLinks]:
    """Index every parsed file (``rel -> tree``), then resolve each test file's tests.
    ``root_package`` names the root when it is itself a package (an installed one)."""
    index = PackageIndex()
    for rel, tree in trees.items():
        index.add(rel, tree, root_package, index_defs=not is_test(rel))
    resolver = LinkResolver(index, {rel for rel in trees if not is_test(rel)})
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
