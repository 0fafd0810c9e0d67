"""Dead code, by vulture (its Python API: ``Vulture().scavenge(paths)`` then
``get_unused_code(min_confidence=...)``). Test files are scanned too, so a definition only tests
use is not called unused, but only findings outside tests are kept."""

from __future__ import annotations

import contextlib
import io
import time
from pathlib import Path

from rlm.codeview.shapes import AnalyzerFinding, Analyzers, ToolRun
from rlm.codeview.sources import Sources
from rlm.codeview.tools import version_of

MIN_CONFIDENCE = 60  # vulture's own default


def level(confidence: int) -> str:
    return "high" if confidence >= 90 else "medium" if confidence >= 70 else "low"


def build_dead_code(src: Sources) -> tuple[Analyzers, ToolRun]:
    sec = Analyzers(selected=[f"vulture --min-confidence {MIN_CONFIDENCE}"], not_looked_at=[
        ("names used only through strings, getattr, or by other packages (a library's public "
         "API looks unused to vulture: confidence 60)"), "test files (scanned for uses only)"])
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
        v.scavenge([str(src.root / p) for p in src.files])
        items = v.get_unused_code(min_confidence=MIN_CONFIDENCE)
    root = src.root.resolve()
    for it in items:
        try:
            rel = Path(it.filename).resolve().relative_to(root).as_posix()
        except ValueError:
            continue
        if src.is_test(rel):
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
