"""The first sentence of every answer, written by code: what was found, with counts and where
("12 lines in 3 groups: one story of 5 lines sharing `S-QUTGY7`; 4 error-level lines like …").
How it was found (the strategy's own note) and the model's wording come after it."""

from __future__ import annotations

import re

from rlm.schemas import Finding, Report
from rlm.words import n_

_LEADING_TIME = re.compile(r"^\S*\d\S*\s+(?:\S*\d\S*\s+)?")  # a timestamp (and time) first


def _ref(f: Finding) -> str:
    return f"{f.source.path}:{f.source.line_start}"


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


def headline(rep: Report, parts: list[str]) -> str | None:
    """What was found, in one or two sentences; None when there is nothing to say (the
    strategy's own note then leads, e.g. "No line matches …")."""
    if rep.coverage.interrupted and not rep.findings:
        return None
    if getattr(rep, "aggregate", None):  # an exact count by code already leads the answer
        return None
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
    kind = {"direct": "cited line", "grep": "matching line"}.get(rep.strategy, "verified finding")
    return f"**Found:** {n_(len(verified), kind)} ({refs})."
