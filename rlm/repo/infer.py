"""What an expression in a function stands for, by code: a repository class or function, an
instance of a repository class, a builtin value, something from outside the repository, or
unknown with the reason.

Deliberately conservative (principle 10): a local name bound to different things in one
function, a parameter without an annotation, a loop variable or an unannotated return value is
*unknown*, never the definition that happens to share a method's spelling. Used by
rlm.repo.links.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass

from rlm.repo.symbols import ClassInfo, Def, External, ModuleInfo, ModuleRef, PackageIndex

BUILTIN_TYPES = {"str", "bytes", "bytearray", "dict", "list", "set", "frozenset", "tuple", "int",
                 "float", "complex", "bool", "object", "memoryview", "range"}
_RETURNS = {"sorted": "list", "open": "file", "repr": "str", "format": "str", "chr": "str",
            "ascii": "str", "len": "int", "hash": "int", "abs": "int", "enumerate": "enumerate",
            "zip": "zip", "reversed": "iterator", "iter": "iterator", "vars": "dict",
            "globals": "dict", "locals": "dict", "dir": "list", "input": "str", "hex": "str",
            "oct": "str", "bin": "str", "ord": "int"}
_CONST = {str: "str", bytes: "bytes", int: "int", float: "float", bool: "bool", complex: "complex",
          type(None): "None", type(...): "ellipsis"}
_LITERAL = {ast.JoinedStr: "str", ast.List: "list", ast.ListComp: "list", ast.Dict: "dict",
            ast.DictComp: "dict", ast.Set: "set", ast.SetComp: "set", ast.Tuple: "tuple",
            ast.GeneratorExp: "generator"}


@dataclass(frozen=True)
class Builtin:
    """A builtin: the type or function itself (`dict`), an instance (`{}`), or an attribute
    of one (`"".join` is Builtin("str", attr="join"))."""

    type_name: str
    instance: bool = True
    attr: str = ""

    def spelled(self) -> str:
        return f"{self.type_name}.{self.attr}" if self.attr else self.type_name


@dataclass(frozen=True)
class Instance:
    cls: ClassInfo

    def __hash__(self) -> int:
        return hash(self.cls.d)

    def __eq__(self, other) -> bool:
        return isinstance(other, Instance) and other.cls.d == self.cls.d


@dataclass(frozen=True)
class Method:
    """A method reached through an instance, a class, ``self`` or ``super()``."""

    d: Def
    via: str


@dataclass(frozen=True)
class Local:
    """A name defined in the file being walked (a test helper): not a repository definition."""

    name: str


@dataclass(frozen=True)
class Unknown:
    reason: str


@dataclass(frozen=True)
class Super:
    cls: ClassInfo

    def __hash__(self) -> int:
        return hash(self.cls.d)


def unwrap_optional(ann: ast.expr) -> ast.expr:
    """`X | None` and `Optional[X]` stand for X when a method is called on them."""
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        sides = [s for s in (ann.left, ann.right)
                 if not (isinstance(s, ast.Constant) and s.value is None)]
        return sides[0] if len(sides) == 1 else ann
    if (isinstance(ann, ast.Subscript) and isinstance(ann.value, (ast.Name, ast.Attribute))
            and ast.unparse(ann.value).rsplit(".", 1)[-1] == "Optional"):
        return ann.slice
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        try:
            return unwrap_optional(ast.parse(ann.value, mode="eval").body)
        except SyntaxError:
            return ann
    return ann


class ModuleScope:
    """Names at module level: definitions, classes, imports, simple assignments, builtins."""

    def __init__(self, index: PackageIndex, m: ModuleInfo, assigns: dict[str, list[ast.expr]]
                 | None = None):
        self.index, self.m, self.assigns = index, m, assigns or {}
        self._busy: set[str] = set()

    def lookup(self, name: str):
        m = self.m
        if name in m.classes:
            return m.classes[name]
        if name in m.functions:
            return m.functions[name]
        if name in m.imports:
            got = self.index.imported(*m.imports[name])
            return got if got is not None else Unknown(f"`{name}` is imported from a name code "
                                                       "could not follow")
        if name in self.assigns and name not in self._busy:
            self._busy.add(name)
            try:
                return agree([Evaluator(self).value(e) for e in self.assigns[name]], name)
            finally:
                self._busy.discard(name)
        if m.star_from:
            got = self.index.star_member(m, name)
            return got if got is not None else Unknown(f"`{name}` may come from a star import")
        if hasattr(builtins, name):
            return Builtin(name, instance=False)
        return Unknown(f"`{name}` is not bound at module level")


def agree(values: list, name: str):
    """One value when every binding of a name agrees; unknown otherwise."""
    first = values[0] if values else Unknown(f"`{name}` has no binding code could read")
    if all(v == first for v in values[1:]):
        return first
    return Unknown(f"`{name}` is bound to different things in this scope")


class Evaluator:
    """Evaluate expressions in a scope (`lookup(name)`), with `self` and `super()` when the
    code is inside a class."""

    def __init__(self, scope, self_cls: ClassInfo | None = None):
        self.scope, self.self_cls = scope, self_cls
        self.index: PackageIndex = scope.index

    def value(self, e: ast.expr):
        if isinstance(e, ast.Constant):
            return Builtin(_CONST.get(type(e.value), "object"))
        if type(e) in _LITERAL:
            return Builtin(_LITERAL[type(e)])
        if isinstance(e, ast.Name):
            return self.scope.lookup(e.id)
        if isinstance(e, ast.Attribute):
            return self.attribute(self.value(e.value), e.attr, e)
        if isinstance(e, ast.Call):
            return self.call(e)
        if isinstance(e, ast.Await):
            return self.value(e.value)
        if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Mod) and isinstance(
                e.left, ast.Constant) and isinstance(e.left.value, str):
            return Builtin("str")
        return Unknown(f"`{ast.unparse(e)[:40]}` is a {type(e).__name__} expression")

    def attribute(self, base, attr: str, e: ast.Attribute):
        if isinstance(base, ModuleRef):
            got = self.index.member(base.name, attr)
            return got if got is not None else Unknown(f"`{base.name}` has no `{attr}` code can see")
        if isinstance(base, ClassInfo):
            return self.method(base, attr, f"class `{base.d.qualname}`")
        if isinstance(base, Instance):
            return self.method(base.cls, attr, f"an instance of `{base.cls.d.qualname}`")
        if isinstance(base, Super):
            return self.method(base.cls, attr, f"super() in `{base.cls.d.qualname}`", skip_self=True)
        if isinstance(base, Builtin):
            return Builtin(base.type_name, instance=True, attr=attr)
        if isinstance(base, External):
            return External(f"{base.dotted}.{attr}")
        if isinstance(base, Unknown):
            return base
        return Unknown(f"`{ast.unparse(e.value)[:40]}` is {type(base).__name__.lower()}")

    def method(self, cls: ClassInfo, attr: str, via: str, skip_self: bool = False):
        """A method found along the class's bases, in order; unknown when an external base
        comes first (it may define the name) or a base cannot be followed."""
        for c in self.mro(cls)[1 if skip_self else 0:]:
            if isinstance(c, ClassInfo):
                if attr in c.methods:
                    return Method(c.methods[attr], via)
            else:
                return Unknown(f"`{cls.d.qualname}` inherits from {c}, which code does not read")
        return Unknown(f"{via} has no method `{attr}` code can see (an attribute or a dynamic "
                       "name)")

    def mro(self, cls: ClassInfo, depth: int = 0) -> list:
        out: list = [cls]
        if depth > 8:
            return out + ["a base class too deep to follow"]
        m = self.index.modules.get(cls.d.module)
        ev = Evaluator(ModuleScope(self.index, m)) if m else None
        for b in cls.bases:
            v = ev.value(b) if ev else Unknown("")
            if isinstance(v, ClassInfo):
                out += [c for c in self.mro(v, depth + 1) if c not in out]
            elif isinstance(v, Builtin) and v.type_name == "object":
                continue
            else:
                out.append(f"`{ast.unparse(b)[:40]}`")
        return out

    def call(self, e: ast.Call):
        if isinstance(e.func, ast.Name) and e.func.id == "super" and self.self_cls is not None:
            return Super(self.self_cls)
        f = self.value(e.func)
        if isinstance(f, ClassInfo):
            return Instance(f)
        if isinstance(f, (Def, Method)):
            return self.returned(f.d if isinstance(f, Method) else f)
        if isinstance(f, Builtin):
            if not f.instance and f.type_name in BUILTIN_TYPES:
                return Builtin(f.type_name)
            if not f.instance and f.type_name in _RETURNS:
                return Builtin(_RETURNS[f.type_name])
            return Unknown(f"the result of `{f.spelled()}`")
        if isinstance(f, External):  # a class by its spelling makes an object of that class;
            last = f.dotted.rsplit(".", 1)[-1]  # a function's result could be anything
            return External(f"{f.dotted}()") if last[:1].isupper() else Unknown(
                f"the result of `{f.dotted}`, from outside the repository")
        return f if isinstance(f, Unknown) else Unknown(f"the result of `{ast.unparse(e.func)[:40]}`")

    def returned(self, d: Def):
        """The value a repository function returns, from its return annotation."""
        m = self.index.modules.get(d.module)
        if m is None:
            return Unknown(f"`{d.qualname}` is outside the index")
        if d.kind == "method":
            cls_name, meth = d.qualname.split(".", 1)
            ann = m.classes[cls_name].returns.get(meth) if cls_name in m.classes else None
            if meth == "__enter__" or (ann is not None and ast.unparse(ann).strip("'\"") == "Self"):
                return Instance(m.classes[cls_name]) if ann is not None else Unknown("")
        else:
            ann = m.returns.get(d.name)
        if ann is None:
            return Unknown(f"the return type of `{d.qualname}` is not annotated")
        v = Evaluator(ModuleScope(self.index, m)).value(unwrap_optional(ann))
        if isinstance(v, ClassInfo):
            return Instance(v)
        if isinstance(v, Builtin) and not v.instance and v.type_name in BUILTIN_TYPES:
            return Builtin(v.type_name)
        return Unknown(f"`{d.qualname}` returns `{ast.unparse(ann)[:40]}`")
