"""The first sentence of every answer, written by code: what was found, with counts and where
("12 lines in 3 groups: one story of 5 lines sharing `S-QUTGY7`; 4 error-level lines like …").
How it was found (the strategy's own note) and the model's wording come after it."""

from __future__ import annotations

import re

from rlm.render.safetext import visible
from rlm.schemas.report import Finding, Report
from rlm.words import n_

_LEADING_TIME = re.compile(r"^\S*\d\S*\s+(?:\S*\d\S*\s+)?")  # a timestamp (and time) first


def _ref(f: Finding) -> str:
    return f"{visible(f.source.path)}:{f.source.line_start}"


def _gist(f: Finding, width: int = 70) -> str:
    text = " ".join(f.evidence.split("\n")[0].split())
    text = _LEADING_TIME.sub("", text) or text
    return text if len(text) <= width else text[: width - 1] + "…"


def _group_phrase(g: dict, fs: list[Finding]) -> str:
    if g.get("kind") == "identifier":
        return f"one story of {n_(len(fs), 'line')} sharing `{g.get('key')}`"
    level = "error-level " if "error level" in (g.get("why") or "") else ""
    like = f" like “{_gist(fs[0])}”" if fs else ""
    return f"{n_(len(fs), level + 'line')}{like}"


def budget_stop(rep: Report, budget) -> str | None:
    """"Stopped by the call budget of 6: 61 of 62 chunks were not run (c0002-c0062)." when a
    cap stopped the run (the coverage statement lists them all). `budget`
    (rlm.engine.budget.Budget) says which units a spent cap stopped, and which cap."""
    from rlm.engine.ledger import failed_list

    stopped = [c for c in rep.coverage.chunks_failed if c.chunk in budget.stopped_ids]
    if not stopped:
        return None
    why = budget.stopped_by
    runs = [e.split(" ")[0] for e in failed_list(stopped, limit=3).split("; ")]
    ids = ", ".join(r for r in runs[:3] if r.startswith(stopped[0].chunk[:1]))
    was = "was" if len(stopped) == 1 else "were"
    if getattr(budget, "tripped", None):  # the circuit breaker, not a cap
        return (f"**Stopped: the model server is gone** ({why}): {len(stopped)} of "
                f"{n_(rep.coverage.chunks_total, 'chunk')} {was} not read ({ids}). Start it "
                "again (or give another with --base-url) and `rlm resume` the run.")
    return (f"**Stopped by the budget** ({why}): {len(stopped)} of "
            f"{n_(rep.coverage.chunks_total, 'chunk')} {was} not read ({ids}). "
            "Raise --max-calls / --max-tokens, or `rlm resume` the run.")


def headline(rep: Report, parts: list[str]) -> str | None:
    """What was found, in one or two sentences; None when there is nothing to say (the
    strategy's own note then leads, e.g. "No line matches …")."""
    if rep.coverage.interrupted and not rep.findings:
        return None
    if getattr(rep, "aggregate", None) or rep.strategy == "count":
        return None  # an exact count by code already leads the answer
    verified = [f for f in rep.findings if f.verified]
    if rep.groups:
        by: dict[str, list[Finding]] = {}
        for f in rep.findings:
            by.setdefault(f.group or "", []).append(f)
        phrases = [_group_phrase(g, by.get(g["id"], [])) for g in rep.groups]
        more = f"; and {n_(len(phrases) - 3, 'more group')}" if len(phrases) > 3 else ""
        return (f"**Found:** {n_(len(verified), 'line')} in {n_(len(rep.groups), 'group')}: "
                + "; ".join(phrases[:3]) + more + ".")
    timeline = next((p for p in parts if re.match(r"\d[\d,]* lines? mentions? ", p)), None)
    if timeline:
        return f"**Found:** {timeline}"
    if not verified:
        return None
    refs = ", ".join(f"`{_ref(f)}`" for f in verified[:3]) + (", …" if len(verified) > 3 else "")
    if all(f.label == "found by code" for f in verified):  # BM25 passages: no model read them
        return f"**Found:** {n_(len(verified), 'passage')} ranked by code, not read ({refs})."
    kind = {"direct": "cited line", "grep": "matching line"}.get(rep.strategy, "verified finding")
    return f"**Found:** {n_(len(verified), kind)} ({refs})."
