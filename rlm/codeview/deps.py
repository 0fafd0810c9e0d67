"""Declared dependencies and where each is imported; declared but never imported; imported but
not declared. A distribution's import names come from its installed metadata where rlm runs,
else from a small table of known renames, else from its own name."""

from __future__ import annotations

import re
import sys
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, distribution

from rlm.codeview.imports import Import
from rlm.codeview.packaging import Metadata
from rlm.codeview.severity import rules
from rlm.codeview.shapes import Dependencies, UndeclaredImport
from rlm.codeview.sources import Sources

MAX_FILES = 15  # files listed per dependency; the full count is in the used_in length cap note


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@lru_cache(maxsize=256)
def _installed(dist: str) -> tuple[str, ...]:
    """The top-level import names of one installed distribution (where rlm runs): its
    top_level.txt, else the first folder or module of each file it installed."""
    try:
        d = distribution(dist)
    except PackageNotFoundError:
        return ()
    top = d.read_text("top_level.txt")
    if top:
        return tuple(sorted({t.strip() for t in top.split() if t.strip()}))
    names = set()
    for f in d.files or ():
        first = f.parts[0] if f.parts else ""
        if first.endswith(".py"):
            names.add(first[:-3])
        elif len(f.parts) > 1 and not first.endswith((".dist-info", ".data")) and first != "..":
            names.add(first)
    return tuple(sorted(names))


def import_names(dist: str) -> tuple[list[str], str]:
    n = normalize(dist)
    got = [i for i in _installed(n) if not i.startswith("_") and i.isidentifier()]
    if got:
        return got, "installed metadata"
    known = rules().get("import_names", {})
    if n in known:
        return list(known[n]), "known rename"
    return [n.replace("-", "_")], "its name"


def build_dependencies(src: Sources, md: Metadata, imports: list[Import]) -> Dependencies:
    sec = Dependencies(produced_by="rlm (packaging metadata + import statements)", not_looked_at=[
        "lock files and constraints; build-system requirements",
        "imports under `if TYPE_CHECKING:` (they never run)",
        "imports built at run time (importlib, plugins, entry points of other packages)",
        *(f"could not read {u}" for u in md.unread)])
    if not md.read:
        sec.status, sec.note = "not_applicable", "no pyproject.toml, setup.cfg, setup.py or requirements*.txt"
    uses: dict[str, dict[str, list[str]]] = {}
    required: set[tuple[str, str]] = set()  # (name, side) imported outside a try/except ImportError
    for i in imports:
        if (i.outside is None or i.outside in sys.stdlib_module_names
                or i.outside == "__future__" or i.kind == "type_checking"):
            continue
        side = "tests" if src.is_test(i.source) else "code"
        files = uses.setdefault(i.outside, {"code": [], "tests": []})[side]
        if i.source not in files:
            files.append(i.source)
        if not i.optional:
            required.add((i.outside, side))
    claimed: set[str] = set()
    for d in md.deps:
        d.import_names, d.import_basis = import_names(d.name)
        for name in d.import_names:
            u = uses.get(name, {"code": [], "tests": []})
            d.used_in = sorted(set(d.used_in) | set(u["code"]))[:MAX_FILES]
            d.used_in_tests = sorted(set(d.used_in_tests) | set(u["tests"]))[:MAX_FILES]
            claimed.add(name)
    sec.declared = md.deps
    sec.unused = sorted({d.name for d in md.deps if not d.used_in and not d.used_in_tests})
    sec.undeclared = [UndeclaredImport(name=n, used_in=sorted(u["code"] or u["tests"])[:MAX_FILES],
                                       optional=(n, "code" if u["code"] else "tests") not in required,
                                       in_tests_only=not u["code"])
                      for n, u in sorted(uses.items()) if n not in claimed]
    return sec
