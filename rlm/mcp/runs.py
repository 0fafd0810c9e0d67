"""The run history seen through the MCP server: only runs whose corpus lies under the roots.

A run record quotes its corpus (evidence lines), so a run about a file outside the roots is as
private as the file: it is not listed, shown or resumed.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from rlm.errors import UsageError
from rlm.mcp.roots import PathRefused, Roots


class RunSummary(BaseModel):
    id: str
    created: str
    command: str | None = None
    corpus: str | None = None
    question: str | None = None
    strategy: str | None = None
    status: str
    complete: bool | None = None
    chunks_total: int | None = None
    chunks_ok: int | None = None
    chunks_failed: int | None = None
    tokens: int | None = None
    resumed_from: str | None = None
    error: str | None = None


class RunsResult(BaseModel):
    runs: list[RunSummary]
    hidden: int = Field(0, description="recent runs not listed: their corpus is outside the roots "
                        "or no longer exists")
    statement: str


class ShownReport(BaseModel):
    """A recorded report as it was recorded: an ask report (the `ask` tool's schema), or an
    audit or mine report (theirs); `command` says which."""

    model_config = ConfigDict(extra="allow")
    command: str
    question: str
    answer: str = ""
    findings: list[dict] = Field(default_factory=list)
    coverage: dict = Field(default_factory=dict)
    run_id: str = ""


def _store():
    from rlm.store.runs import run_history

    return run_history()


def _when(ts: float | None) -> str:
    from rlm.store.runs import when

    return when(ts)


def corpus_of(r: dict) -> str | None:
    o = r.get("options") or {}
    return o.get("path_abs") or r.get("corpus")


def _inside(roots: Roots, r: dict) -> bool:
    p = corpus_of(r)
    if not p or p == "-":
        return False
    try:
        roots.resolve(p)
    except UsageError:  # outside, escaping, or gone
        return False
    return True


def summary(r: dict) -> RunSummary:
    return RunSummary(id=r["id"], created=_when(r.get("created")), command=r.get("command"),
                      corpus=corpus_of(r), question=r.get("question"), strategy=r.get("strategy"),
                      status=r["status"], complete=r.get("complete"),
                      chunks_total=r.get("chunks_total"), chunks_ok=r.get("chunks_ok"),
                      chunks_failed=r.get("chunks_failed"), tokens=r.get("tokens"),
                      resumed_from=r.get("resumed_from"), error=r.get("error"))


def list_runs(roots: Roots, limit: int) -> RunsResult:
    s = _store()
    try:
        rows = s.list(limit * 4)  # some may be hidden
    finally:
        s.close()
    shown = [r for r in rows if _inside(roots, r)]
    hidden = len(rows) - len(shown)
    shown = shown[:limit]
    st = f"{len(shown)} run(s)" + (f"; {hidden} recent run(s) about paths outside the roots (or "
                                    "gone) are not listed" if hidden else "") + "."
    return RunsResult(runs=[summary(r) for r in shown], hidden=hidden, statement=st)


def get_run(roots: Roots, ref: str) -> dict:
    """The record of run `ref`; refused when its corpus is outside the roots."""
    s = _store()
    try:
        r = s.get(s.resolve(ref))
    finally:
        s.close()
    if not _inside(roots, r):  # its path is not named: it is as private as the file
        raise PathRefused(f"run {r['id']} is about a path outside the allowed roots "
                          f"({roots.describe()}), or one that no longer exists")
    return r


def typed_report(data: dict):
    """A recorded report as its type: ask's Report, or audit's and mine's (ValueError when it
    does not validate: recorded by another version of rlm)."""
    if data.get("command") in ("audit", "mine"):
        from rlm.repo import record

        return record.load_report(data)
    from rlm.schemas.report import Report

    return Report.model_validate(data)


def resume_target(roots: Roots, ref: str) -> tuple[str, str, str, dict]:
    """(run id, corpus path, question, recorded options) of an ask run resumable here."""
    r = get_run(roots, ref)
    o = r.get("options") or {}
    if o.get("command", "ask") != "ask":
        raise UsageError(f"run {r['id']} is not an `ask` run; only ask runs can be resumed")
    path = corpus_of(r)
    if not path or not Path(path).exists():
        raise UsageError(f"run {r['id']} read {path}, which no longer exists")
    from rlm.redact.record_mask import cannot_resume, masked_question

    if masked_question(r):
        raise UsageError(cannot_resume(r, "ask it again"))
    return r["id"], os.fspath(path), r["question"], o


def no_report_line(r: dict) -> str:
    total = r.get("chunks_total") if r.get("chunks_total") is not None else "?"
    line = (f"run {r['id']} has no report: status {r['status']}, {r.get('chunks_ok') or 0} "
            f"chunk(s) answered and {r.get('chunks_failed') or 0} failed of {total}")
    if r.get("error"):
        line += f" ({r['error']})"
    return line + f"; resume it with the resume tool (run_id {r['id']})."
