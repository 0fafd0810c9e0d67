"""How a job of audit or mine ended, as a type (not a reason string to parse).

The mapper (rlm.engine.mapper) reports an outcome with an error text; this is the one place that
turns it into a kind, so the rest of audit and mine branch on the kind only.
(When the shared engine has its own outcome enum, this module maps onto it.)
"""

from __future__ import annotations

from enum import Enum


class JobEnd(str, Enum):
    OK = "ok"
    FAILED = "failed"  # the call was made and failed (transport, status, invalid output)
    NOT_RUN = "not_run"  # never started: the budget was spent or the run was cancelled
    INTERRUPTED = "interrupted"  # Ctrl-C


def job_end(outcome) -> JobEnd:
    """The kind of a mapper outcome."""
    if outcome.error is None:
        return JobEnd.OK
    err = outcome.error
    if err.startswith("interrupted"):
        return JobEnd.INTERRUPTED
    if err.startswith("not run"):
        return JobEnd.NOT_RUN
    return JobEnd.FAILED


def job_event(j, end: JobEnd, error: str | None, budget) -> dict:
    """The same fields as ask's chunk events: id, outcome, path and line range (first file)."""
    shown = j.shown()
    path, a, b = shown[0] if shown else ("", 0, 0)
    b = max(e for p, _, e in shown if p == path) if shown else 0
    u = budget.usage
    return {"ok": end is JobEnd.OK, "outcome": end.value, "chunk": j.id, "path": path,
            "line_start": a, "line_end": b, "files": len({p for p, _, _ in shown}),
            "error": error, "tokens": u.total_tokens, "calls": u.calls,
            "cached_calls": u.cached_calls}
