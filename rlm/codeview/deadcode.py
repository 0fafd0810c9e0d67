"""Dead code, by vulture (its Python API: ``Vulture().scavenge(paths)`` then
``get_unused_code(min_confidence=...)``). Test files are scanned too, so a definition only tests
use is not called unused, but only findings outside tests are kept."""

from __future__ import annotations

import ast
import contextlib
import io
import pkgutil
import time
from pathlib import Path

from rlm.codeview.shapes import AnalyzerFinding, Analyzers, ToolRun
from rlm.codeview.sources import Sources
from rlm.codeview.tools import version_of

MIN_CONFIDENCE = 60  # vulture's own default


def level(confidence: int) -> str:
    return "high" if confidence >= 90 else "medium" if confidence >= 70 else "low"


def build_dead_code(src: Sources, public: set[str] = frozenset()) -> tuple[Analyzers, ToolRun]:
    """``public``: the names the packages export; unused inside, they are for the callers."""
    sec = Analyzers(selected=[f"vulture --min-confidence {MIN_CONFIDENCE}"], not_looked_at=[
        ("names used only through strings, getattr, or by other packages (a library's public "
         "API looks unused to vulture: confidence 60)"), "test files (scanned for uses only)",
        ("names the packages export (public API), dunder names Python calls, Enum members, "
         "docs/ (Sphinx reads conf.py by name): left out of the findings")])
    try:
        from vulture import Vulture
    except ImportError:
        sec.status, sec.note = "missing", "vulture is not installed: no dead-code findings"
        return sec, ToolRun(name="vulture", status="missing", detail="import vulture failed")
    run = ToolRun(name="vulture", version=version_of("vulture"))
    sec.produced_by = f"vulture {run.version}".strip()
    t0 = time.perf_counter()
    v = Vulture()
    with contextlib.redirect_stdout(io.StringIO()):  # vulture prints parse errors
        for rel in src.files:  # the text rlm read beneath the root: vulture opens nothing
            v.scan(src.text(rel), filename=src.root / rel)
        _whitelists(v)
        items = v.get_unused_code(min_confidence=MIN_CONFIDENCE)
    root = src.root.resolve()
    for it in items:
        try:
            rel = Path(it.filename).resolve().relative_to(root).as_posix()
        except ValueError:
            continue
        if src.is_test(rel) or rel.startswith(("docs/", "doc/")) or _called_by_python(
                it.name, public) or _enum_member(src, rel, it.first_lineno):
            continue
        conf = level(it.confidence)
        sec.findings.append(AnalyzerFinding(
            tool="vulture", rule=f"unused-{it.typ}".replace("_", "-"), message=it.message,
            path=rel, line=it.first_lineno, end_line=max(it.first_lineno, it.last_lineno),
            severity="low", confidence=conf, kind="dead_code",
            basis=f"vulture: {it.confidence}% confidence (dead code is rated low: it does "
                  "not run)"))
    for f in sec.findings:
        sec.by_rule[f.rule] = sec.by_rule.get(f.rule, 0) + 1
    run.wall_s = round(time.perf_counter() - t0, 3)
    return sec, run


def _called_by_python(name: str, public: set[str]) -> bool:
    return name in public or (name.startswith("__") and name.endswith("__"))


def _enum_member(src: Sources, rel: str, line: int) -> bool:
    """A name assigned in the body of a class whose base is an Enum: a member callers use."""
    tree = src.tree(rel)
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.ClassDef) and node.lineno < line <= (node.end_lineno or 0):
            bases = {getattr(b, "id", getattr(b, "attr", "")) for b in node.bases}
            if any(b.endswith("Enum") for b in bases) and any(
                    isinstance(s, (ast.Assign, ast.AnnAssign)) and s.lineno == line
                    for s in node.body):
                return True
    return False


def _whitelists(v) -> None:
    """What ``Vulture.scavenge`` adds after its scan: vulture's own whitelist of each imported
    standard module (names used by that module's callbacks), so they are not called unused."""
    for name in {item.name for item in v.defined_imports}:
        try:
            data = pkgutil.get_data("vulture", f"whitelists/{name}_whitelist.py")
        except OSError:
            continue
        if data:
            v.scan(data.decode("utf-8"), filename=Path("whitelists") / f"{name}_whitelist.py")
