"""The public API of each top-level package: ``__all__`` of its ``__init__.py`` when it is a
literal, else the public names the ``__init__`` defines or imports; each name with the module the
``__init__`` takes it from, when code saw that import."""

from __future__ import annotations

import ast

from rlm.codeview.imports import _absolute, _package_of
from rlm.codeview.shapes import ApiName, PackageApi, PublicApi
from rlm.codeview.sources import Sources

MAX_NAMES = 200


def build_public_api(src: Sources) -> PublicApi:
    sec = PublicApi(produced_by="rlm (Python ast: package __init__.py)", not_looked_at=[
        "__all__ built by code (concatenations, loops)", "names added by __getattr__",
        "sub-packages' own __init__ (only top-level packages)"])
    for rel in src.files:
        name = src.module_of[rel]
        if not src.is_package(rel) or "." in name or "/" in name or src.is_test(rel):
            continue
        tree = src.tree(rel)
        if tree is None:
            continue
        origin = _origins(src, rel, tree)
        declared = _all(tree)
        if declared is not None:
            names, how = declared, "__all__"
        else:
            names, how = [n for n in origin if not n.startswith("_")], "public names"
        sec.packages.append(PackageApi(package=name, path=rel, source=how, names=[
            ApiName(name=n, defined_in=origin.get(n, ("", 0))[0], line=origin.get(n, ("", 0))[1])
            for n in names[:MAX_NAMES]]))
    if not sec.packages:
        sec.status, sec.note = "not_applicable", "no top-level package (a folder with __init__.py)"
    return sec


def _all(tree: ast.Module) -> list[str] | None:
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else (
            [node.target] if isinstance(node, ast.AnnAssign) else [])
        if any(getattr(t, "id", "") == "__all__" for t in targets) and isinstance(
                node.value, (ast.List, ast.Tuple)):
            return [e.value for e in node.value.elts
                    if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return None


def _origins(src: Sources, rel: str, tree: ast.Module) -> dict[str, tuple[str, int]]:
    """name -> (the module it comes from, the line in __init__), top-level statements only."""
    base = _package_of(src, rel)
    here = src.module_of[rel]
    out: dict[str, tuple[str, int]] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            mod = _absolute(base, node.module, node.level) or ""
            for a in node.names:
                if a.name == "*":  # the names the star brings: that module's own public names
                    for n in _star_names(src, mod):
                        out.setdefault(n, (mod, node.lineno))
                    continue
                sub = f"{mod}.{a.name}"
                out[a.asname or a.name] = (sub if sub in src.path_of else mod, node.lineno)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out[node.name] = (here, node.lineno)
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name) and not t.id.startswith("__"):
                    out[t.id] = (here, node.lineno)
    return out


def _star_names(src: Sources, module: str) -> list[str]:
    rel = src.path_of.get(module)
    tree = src.tree(rel) if rel else None
    if tree is None:
        return []
    declared = _all(tree)
    if declared is not None:
        return declared
    return [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                         ast.ClassDef))
            and not n.name.startswith("_")]
