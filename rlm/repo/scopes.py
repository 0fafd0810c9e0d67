"""The names bound inside one function, for rlm.repo.infer: parameters (with `self` as the
enclosing class, and pytest fixtures followed to the fixture function that makes them),
assignments, `with ... as`, loop and unpacked variables (unknown), nested definitions and
imports. A name bound to different things in one function is unknown.
"""

from __future__ import annotations

import ast

from rlm.repo.infer import (
    Builtin,
    Evaluator,
    Instance,
    Local,
    Method,
    ModuleScope,
    Unknown,
    agree,
    unwrap_optional,
)
from rlm.repo.symbols import ClassInfo, Def, External, ModuleInfo

class FunctionScope:
    """Names bound inside one function (and anything nested in it), then the module's."""

    def __init__(self, outer: ModuleScope, fn: ast.FunctionDef | ast.AsyncFunctionDef,
                 self_cls: ClassInfo | None, fixtures: Fixtures | None = None):
        self.index, self.outer, self.self_cls = outer.index, outer, self_cls
        self.fixtures = fixtures
        self.parametrized = _parametrized(fn)
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
            elif a.annotation is not None:
                self._bind(a.arg, ("ann", a.annotation))
            elif self.fixtures is not None and a.arg not in self.parametrized:
                self._bind(a.arg, ("fixture", a.arg))
            else:
                what = ("a parametrized argument" if self.parametrized else "a parameter")
                self._bind(a.arg, ("value", Unknown(f"`{a.arg}` is {what}: its type is not in "
                                                    "the code")))
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
        if kind == "fixture":
            return self.fixtures.value(self.outer.m.path, x)
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
                for name in ("__enter__", "__aenter__"):  # found along the class's bases
                    enter = ev.method(ctx.cls, name, "")
                    if isinstance(enter, Method):
                        cls = self.index.modules[enter.d.module].classes.get(
                            enter.d.qualname.split(".")[0])
                        if cls is not None and name in cls.returns_self:
                            return ctx  # `return self`: the instance of the class constructed
                        return ev.returned(enter.d)
            if isinstance(ctx, (Builtin, External)):  # `with open(p) as f`: a builtin file;
                return ctx  # `with tempfile.NamedTemporaryFile() as f`: an outside object
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


def _parametrized(fn) -> set[str]:
    """Argument names a `@pytest.mark.parametrize("a, b", ...)` on the function supplies."""
    out: set[str] = set()
    for d in fn.decorator_list:
        if (isinstance(d, ast.Call) and ast.unparse(d.func).endswith("parametrize") and d.args
                and isinstance(d.args[0], ast.Constant) and isinstance(d.args[0].value, str)):
            out.update(n.strip() for n in d.args[0].value.split(","))
        elif isinstance(d, ast.Call) and ast.unparse(d.func).endswith("parametrize"):
            out.add("*")  # names given as a list or tuple: every parameter may be one
    return out


def _is_fixture(fn) -> str | None:
    """The fixture name of a `@pytest.fixture` (or `@fixture(name=...)`) function, else None."""
    for d in fn.decorator_list:
        f = d.func if isinstance(d, ast.Call) else d
        if ast.unparse(f).rsplit(".", 1)[-1] == "fixture":
            named = next((k.value.value for k in getattr(d, "keywords", [])
                          if k.arg == "name" and isinstance(k.value, ast.Constant)), None)
            return named or fn.name
    return None


class Fixtures:
    """pytest fixtures by code: a test's parameter is the fixture of that name in the test's
    own module, else in the nearest conftest.py up its folders (pytest's own order); its value
    is what the fixture function returns or yields, when every return agrees. A fixture from a
    plugin (tmp_path, monkeypatch) is not in the repository: unknown."""

    def __init__(self, index, trees: dict[str, ast.Module]):
        self.index = index
        self.defs: dict[str, dict[str, ast.FunctionDef]] = {}  # module path -> name -> def
        for rel, tree in trees.items():
            for node in tree.body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    name = _is_fixture(node)
                    if name:
                        self.defs.setdefault(rel, {})[name] = node
        self._busy: set[tuple[str, str]] = set()

    def find(self, rel: str, name: str) -> tuple[str, ast.FunctionDef] | None:
        if name in self.defs.get(rel, {}):
            return rel, self.defs[rel][name]
        folder = rel.rsplit("/", 1)[0] if "/" in rel else ""
        while True:
            conf = f"{folder}/conftest.py" if folder else "conftest.py"
            if name in self.defs.get(conf, {}):
                return conf, self.defs[conf][name]
            if not folder:
                return None
            folder = folder.rsplit("/", 1)[0] if "/" in folder else ""

    def value(self, rel: str, name: str):
        found = self.find(rel, name)
        if found is None:
            return Unknown(f"`{name}` is a parameter (a fixture code did not find in the "
                           "repository, or an argument): its type is not in the code")
        where, fn = found
        m = self.index.by_path.get(where)
        if m is None or (where, name) in self._busy:
            return Unknown(f"the fixture `{name}` could not be followed")
        self._busy.add((where, name))
        try:
            scope = FunctionScope(ModuleScope(self.index, m), fn, None, self)
            ev = Evaluator(scope)
            if fn.returns is not None:
                v = ev.value(unwrap_optional(fn.returns))
                return Instance(v) if isinstance(v, ClassInfo) else Unknown(
                    f"the fixture `{name}` is annotated `{ast.unparse(fn.returns)[:40]}`")
            made = [ev.value(n.value) for n in _own_nodes(fn)
                    if isinstance(n, (ast.Return, ast.Yield)) and n.value is not None]
            v = agree(made, name)
            if isinstance(v, Unknown):
                return Unknown(f"the fixture `{name}` ({where}:{fn.lineno}) makes "
                               f"{'nothing code can read' if not made else 'an unknown value'}")
            return v
        finally:
            self._busy.discard((where, name))


def _own_nodes(fn):
    """The nodes of a function, not of the functions or classes nested in it."""
    todo = list(ast.iter_child_nodes(fn))
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        yield n
        todo.extend(ast.iter_child_nodes(n))
