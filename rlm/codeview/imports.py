"""Every import statement of every file, resolved to a module of the repository (longest dotted
prefix it defines) or to an outside top-level name, with where the statement sits: at module
level, inside a function, or under ``if TYPE_CHECKING:``, and whether a try/except ImportError
makes it optional."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from rlm.codeview.sources import Sources

IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError"}


@dataclass(frozen=True)
class Import:
    source: str  # the importing file
    line: int
    kind: str  # module | function | type_checking
    optional: bool
    target: str | None  # a module of the repository (dotted), when it is one
    outside: str | None  # the top-level name of an outside import (stdlib or a dependency)


def file_imports(src: Sources, rel: str) -> list[Import]:
    tree = src.tree(rel)
    if tree is None:
        return []
    out: list[Import] = []
    base = _package_of(src, rel)

    def visit(stmts: list[ast.stmt], kind: str, optional: bool) -> None:
        """Statements only: an import is a statement, so expressions are never walked."""
        for n in stmts:
            if isinstance(n, ast.Import):
                for a in n.names:
                    out.append(_resolve(src, rel, n.lineno, kind, optional, a.name, None))
            elif isinstance(n, ast.ImportFrom):
                mod = _absolute(base, n.module, n.level)
                for a in n.names if mod is not None else ():  # None: above the top package
                    out.append(_resolve(src, rel, n.lineno, kind, optional, mod,
                                        None if a.name == "*" else a.name, n.level > 0))
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(n.body, "function" if kind == "module" else kind, optional)
            elif isinstance(n, ast.If) and _is_type_checking(n.test):
                visit(n.body, "type_checking", optional)
                visit(n.orelse, kind, optional)
            elif isinstance(n, ast.Try) and any(_catches_import_error(h) for h in n.handlers):
                visit(n.body, kind, True)
                for h in n.handlers:
                    visit(h.body, kind, optional)
                visit(n.orelse + n.finalbody, kind, optional)
            else:
                for name in ("body", "orelse", "finalbody", "handlers", "cases"):
                    for child in getattr(n, name, ()) or ():
                        # a handler or a match case holds statements in its body
                        visit([child] if isinstance(child, ast.stmt) else child.body, kind,
                              optional)

    visit(tree.body, "module", False)
    return out


def _package_of(src: Sources, rel: str) -> list[str]:
    name = src.module_of[rel]
    parts = name.split(".") if "/" not in name else []
    return parts if src.is_package(rel) else parts[:-1]


def _absolute(base: list[str], module: str | None, level: int) -> str | None:
    if level == 0:
        return module or None
    if level - 1 > len(base):
        return None
    parts = base[:len(base) - (level - 1)] + (module.split(".") if module else [])
    return ".".join(parts) or None


def _resolve(src: Sources, rel: str, line: int, kind: str, optional: bool, module: str,
             name: str | None, relative: bool = False) -> Import:
    known = src.path_of
    target = None
    if name and f"{module}.{name}" in known:
        target = f"{module}.{name}"  # `from pkg import submodule`
    else:
        parts = module.split(".")
        for i in range(len(parts), 0, -1):
            if ".".join(parts[:i]) in known:
                target = ".".join(parts[:i])
                break
    if target == src.module_of[rel]:
        target = None  # a package importing from itself
    outside = None if (target or relative or module.split(".")[0] in src.top_names) else module.split(".")[0]
    return Import(rel, line, kind, optional, target, outside)


def _is_type_checking(test: ast.AST) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _catches_import_error(h: ast.ExceptHandler) -> bool:
    t = h.type
    names = t.elts if isinstance(t, ast.Tuple) else [t] if t is not None else []
    return t is None or any(getattr(n, "id", getattr(n, "attr", "")) in IMPORT_ERRORS | {"Exception"}
                            for n in names)


def all_imports(src: Sources) -> list[Import]:
    return [i for rel in src.files for i in file_imports(src, rel)]
