"""What a repository's Python modules define and import, by code (the ``ast`` of each file).

The index answers one question for rlm.repo.links: "which definition does this name stand for
in this module?" It follows imports (absolute, relative, aliased) and re-exports through
``__init__`` files, so ``from httpx import Response`` in a test lands on
``httpx/_models.py:class Response``. A name that the index cannot follow is not guessed: the
lookup returns ``None`` or an external reference (a module outside the repository, such as
``pathlib``), never a definition that merely shares the spelling.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

MAX_DEPTH = 12  # re-export chains longer than this are not followed (a cycle, most likely)


@dataclass(frozen=True)
class Def:
    """A function, method or class definition in the repository."""

    module: str
    qualname: str  # `split`, `Response.read`
    path: str
    line: int
    kind: str  # function | method | class

    @property
    def name(self) -> str:
        return self.qualname.rsplit(".", 1)[-1]

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass(frozen=True)
class External:
    """A name imported from outside the repository (stdlib or a dependency): `pathlib.Path`."""

    dotted: str


@dataclass(frozen=True)
class ModuleRef:
    name: str


@dataclass
class ClassInfo:
    d: Def
    bases: list[ast.expr]
    methods: dict[str, Def] = field(default_factory=dict)
    returns: dict[str, ast.expr] = field(default_factory=dict)  # method -> return annotation
    returns_self: set[str] = field(default_factory=set)  # methods whose every return is `self`
    context_managers: set[str] = field(default_factory=set)  # @contextmanager methods


@dataclass
class ModuleInfo:
    name: str
    path: str
    is_package: bool
    functions: dict[str, Def] = field(default_factory=dict)
    returns: dict[str, ast.expr] = field(default_factory=dict)  # function -> return annotation
    classes: dict[str, ClassInfo] = field(default_factory=dict)
    imports: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # alias -> (mod, name)
    star_from: list[str] = field(default_factory=list)
    exports: set[str] | None = None  # `__all__` when the module declares it as a literal
    context_managers: set[str] = field(default_factory=set)  # @contextmanager functions


def module_name(rel: str, root_package: str = "") -> tuple[str, bool]:
    """Dotted module name of a repository-relative path (``src/`` layouts stripped); when the
    root is itself a package (an installed one), its name is the prefix."""
    parts = rel[:-3].split("/") if rel.endswith(".py") else rel.split("/")
    if parts[0] == "src" and len(parts) > 1:
        parts = parts[1:]
    is_pkg = parts[-1] == "__init__"
    if is_pkg:
        parts = parts[:-1]
    if root_package:
        parts = [root_package, *parts]
    return ".".join(p for p in parts if p), is_pkg


def _is_context_manager(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(ast.unparse(d).rsplit(".", 1)[-1] in ("contextmanager", "asynccontextmanager")
               for d in fn.decorator_list)


def _returns_self(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    rets = [n for n in ast.walk(fn) if isinstance(n, ast.Return)]
    return bool(rets) and all(isinstance(r.value, ast.Name) and r.value.id == "self" for r in rets)


class PackageIndex:
    """Modules by dotted name, with their top-level definitions, classes and imports."""

    def __init__(self) -> None:
        self.modules: dict[str, ModuleInfo] = {}
        self.by_path: dict[str, ModuleInfo] = {}
        self.names: dict[str, list[Def]] = {}  # bare name -> every definition spelled so

    def add(self, rel: str, tree: ast.Module, root_package: str = "", index_defs: bool = True
            ) -> ModuleInfo:
        name, is_pkg = module_name(rel, root_package)
        m = ModuleInfo(name, rel, is_pkg)
        for node in tree.body:
            self._top(m, node, index_defs)
        self.modules[name] = m
        self.by_path[rel] = m
        return m

    def _top(self, m: ModuleInfo, node: ast.stmt, index_defs: bool) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            m.functions[node.name] = self._def(m, node.name, node.lineno, "function", index_defs)
            if node.returns is not None:
                m.returns[node.name] = node.returns
            if _is_context_manager(node):
                m.context_managers.add(node.name)
        elif isinstance(node, ast.ClassDef):
            c = ClassInfo(self._def(m, node.name, node.lineno, "class", index_defs), node.bases)
            for sub in node.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    c.methods[sub.name] = self._def(m, f"{node.name}.{sub.name}", sub.lineno,
                                                    "method", index_defs)
                    if sub.returns is not None:
                        c.returns[sub.name] = sub.returns
                    if _is_context_manager(sub):
                        c.context_managers.add(sub.name)
                    if _returns_self(sub):
                        c.returns_self.add(sub.name)
            m.classes[node.name] = c
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    m.imports[a.asname] = (a.name, None)
                else:  # `import a.b` binds `a`
                    top = a.name.split(".")[0]
                    m.imports[top] = (top, None)
        elif isinstance(node, ast.ImportFrom):
            base = self._absolute(m, node.module or "", node.level)
            for a in node.names:
                if a.name == "*":
                    m.star_from.append(base)
                else:
                    m.imports[a.asname or a.name] = (base, a.name)
        elif (isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__"
                                                   for t in node.targets)
              and isinstance(node.value, (ast.List, ast.Tuple))):
            m.exports = {e.value for e in node.value.elts
                         if isinstance(e, ast.Constant) and isinstance(e.value, str)}
        elif isinstance(node, (ast.If, ast.Try)):  # `try: import x / except ImportError`
            for sub in ast.iter_child_nodes(node):
                if isinstance(sub, (ast.Import, ast.ImportFrom)):
                    self._top(m, sub, index_defs)

    def _def(self, m: ModuleInfo, qual: str, line: int, kind: str, index: bool) -> Def:
        d = Def(m.name, qual, m.path, line, kind)
        if index:
            self.names.setdefault(d.name, []).append(d)
        return d

    @staticmethod
    def _absolute(m: ModuleInfo, mod: str, level: int) -> str:
        if not level:
            return mod
        parts = m.name.split(".")
        keep = parts if m.is_package else parts[:-1]
        keep = keep[:len(keep) - (level - 1)] if level > 1 else keep
        return ".".join([*keep, mod] if mod else keep)

    # -- lookups ------------------------------------------------------------------------------
    def is_internal(self, dotted: str) -> bool:
        return dotted in self.modules or any(k.startswith(dotted + ".") for k in self.modules)

    def member(self, module: str, name: str, depth: int = 0):
        """What `module.name` is: a Def, a ClassInfo, a ModuleRef, an External or None."""
        if depth > MAX_DEPTH:
            return None
        m = self.modules.get(module)
        if m is None:
            sub = f"{module}.{name}"
            if self.is_internal(sub):
                return ModuleRef(sub)
            return None if self.is_internal(module) else External(sub)
        if name in m.classes:
            return m.classes[name]
        if name in m.functions:
            return m.functions[name]
        if name in m.imports:
            return self.imported(*m.imports[name], depth=depth + 1)
        if f"{module}.{name}" in self.modules:
            return ModuleRef(f"{module}.{name}")
        return self.star_member(m, name, depth)

    def star_member(self, m: ModuleInfo, name: str, depth: int = 0):
        """`name` through the module's `from x import *` lines: found only when exactly one
        source exports it (its `__all__`, else a public name) and no star import from outside
        the repository could be the one that binds it."""
        if not m.star_from or any(not self.is_internal(s) for s in m.star_from):
            return None
        found = []
        for star in m.star_from:
            src = self.modules.get(star)
            exported = (name in src.exports if src is not None and src.exports is not None
                        else not name.startswith("_"))
            got = self.member(star, name, depth + 1) if exported else None
            if got is not None and not isinstance(got, External) and got not in found:
                found.append(got)
        return found[0] if len(found) == 1 else None

    def imported(self, mod: str, name: str | None, depth: int = 0):
        """The target of an import: `import mod` (name None) or `from mod import name`."""
        if name is None:
            return ModuleRef(mod) if self.is_internal(mod) else External(mod)
        if not self.is_internal(mod):
            return External(f"{mod}.{name}")
        return self.member(mod, name, depth)

    def class_of(self, d: Def) -> ClassInfo | None:
        m = self.modules.get(d.module)
        return m.classes.get(d.qualname) if m and d.kind == "class" else None
