"""The three systems the eval compares, on the same model and files.

- ``rlm``: ``ask_async`` as a user gets it (probe, gate, chosen strategy, verify, synthesize).
- ``naive-fanout``: the same pipeline forced to fan out over every chunk, no gate
  (``AskOptions(strategy="fanout")``); capped by a call budget where the full fan-out would take
  hours, and then reported as capped and incomplete.
- ``truncated-direct``: what a plain chat with the file sees: one call with the direct recipe
  over as many leading lines as fit the same window rlm uses; lines after that are never read.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from rlm.prompts import recipe
from rlm.api import AskOptions, ask_async
from rlm.engine.budget import Budget
from rlm.engine.call import call_json
from rlm.errors import BudgetExhausted, ModelCallError
from rlm.models.base import Limits, Model


@dataclass
class RunResult:
    system: str
    strategy: str
    findings: list[dict] = field(default_factory=list)
    answer: str = ""
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    wall_s: float = 0.0
    complete: bool = False
    statement: str = ""
    failed: list[dict] = field(default_factory=list)
    chunks_total: int = 0
    chunks_ok: int = 0
    map_claims: list[str] = field(default_factory=list)  # verified map findings (fan-out)
    plan: list[list] = field(default_factory=list)  # [id, path, line_start, line_end, None]
    reduce: dict = field(default_factory=dict)
    note: str = ""
    error: str | None = None


def usable_window(model: Model, opts: AskOptions | None = None) -> int:
    """The material one call may hold, as every rlm command computes it (profile included)."""
    from rlm.engine.window import size_window

    return size_window([model], (opts or AskOptions()).usable_fraction).tokens


def _from_report(system: str, rep, events: dict, wall: float) -> RunResult:
    from rlm.render import answer_markdown  # scored on what a reader sees, findings included

    cov = rep.coverage
    r = RunResult(system=system, strategy=rep.strategy,
                  findings=[f.model_dump(mode="json") for f in rep.findings],
                  answer=answer_markdown(rep), calls=rep.usage.calls, prompt_tokens=rep.usage.prompt_tokens,
                  completion_tokens=rep.usage.completion_tokens, wall_s=round(wall, 1),
                  complete=cov.complete, statement=cov.statement,
                  failed=[c.model_dump(mode="json") for c in cov.chunks_failed],
                  chunks_total=cov.chunks_total, chunks_ok=cov.chunks_ok,
                  map_claims=events["map_claims"], plan=events["plan"],
                  reduce={"rounds": rep.reduce.rounds, "stopped": rep.reduce.stopped,
                          "unmerged": rep.reduce.unmerged,
                          "refused_merges": sum("refused a merge" in m for m in rep.reduce.log)})
    return r


async def run_ask(system: str, model: Model, path: str, question: str, opts: AskOptions) -> RunResult:
    events: dict = {"map_claims": [], "plan": []}

    def on_event(kind: str, data: dict) -> None:
        if kind == "chunk":
            for f in data.get("findings") or []:
                if f.verified:
                    events["map_claims"].append(f.claim)
            # every chunk ends with one such event, failed or not: together they are the plan
            events["plan"].append([data["chunk"], data.get("path"), data.get("line_start"),
                                   data.get("line_end"), None])  # profile groups: no range

    t0 = time.monotonic()
    rep = await ask_async(path, question, opts, model=model, on_event=on_event)
    return _from_report(system, rep, events, time.monotonic() - t0)


async def run_rlm(model: Model, path: str, question: str, **kw) -> RunResult:
    return await run_ask("rlm", model, path, question, AskOptions(**kw))


async def run_naive(model: Model, path: str, question: str, max_calls: int | None,
                    **kw) -> RunResult:
    """Full fan-out over every chunk; capped at max_calls when it would need more calls."""
    plan = await ask_async(path, question, AskOptions(strategy="fanout", dry_run=True, **kw),
                           model=model)
    needed = plan.gate.estimate.calls  # chunks + the synthesis call
    chunks = plan.coverage.chunks_total
    cap = max_calls if (max_calls is not None and chunks > max_calls) else None
    if cap is not None:  # the budget counts finished calls: one at a time makes the cap exact
        kw["concurrency"] = 1
    r = await run_ask("naive-fanout", model, path, question,
                      AskOptions(strategy="fanout", max_calls=cap, **kw))
    if cap is not None:
        r.note = (f"CAPPED at {cap} call{'s' if cap != 1 else ''} (retries included): the full "
                  f"fan-out needs ~{needed:,} calls "
                  f"({chunks:,} chunks); {r.chunks_ok} of {chunks:,} chunks read")
    return r


def _count_lines(path: str) -> int:
    n, last = 0, b"\n"
    with open(path, "rb") as f:
        while True:
            b = f.read(1 << 20)
            if not b:
                break
            n += b.count(b"\n")
            last = b[-1:]
    return n + (0 if last == b"\n" else 1)


def truncated_extent(model: Model, path: str) -> tuple[list[str], int]:
    """The numbered leading lines that fit one call's window, and the file's line count."""
    window = usable_window(model)
    total = _count_lines(path)
    lines: list[str] = []
    used = 0
    with open(path, encoding="utf-8", errors="replace") as f:
        for i, line in enumerate(f, 1):
            numbered = f"{i}| {line.rstrip(chr(10))[:2000]}"
            t = model.count_tokens(numbered) + 1
            if used + t > window:
                break
            lines.append(numbered)
            used += t
    return lines, total


async def run_truncated(model: Model, path: str, question: str, timeout: float = 300.0) -> RunResult:
    """One direct call over the first lines that fit the window; nothing after them is read."""
    from rlm.schemas.calls import AnswerResult

    t0 = time.monotonic()
    lines, total = truncated_extent(model, path)
    n = len(lines)
    material = "\n".join(lines)
    t = recipe.task("giant-file", "direct")
    msgs = recipe.messages("giant-file", "direct", question=question, material=material)
    budget = Budget()
    r = RunResult(system="truncated-direct", strategy="truncated", complete=(n >= total),
                  chunks_total=1)
    try:
        res, _ = await call_json(model, msgs, AnswerResult,
                                 Limits(max_tokens=t["max_tokens"], timeout=timeout), budget)
        r.answer = res.answer.strip()
        r.chunks_ok = 1
        text = {i: ln.split("| ", 1)[1] for i, ln in enumerate(lines, 1)}
        for k, ln in enumerate(dict.fromkeys(res.cites), 1):
            if 1 <= ln <= n:  # code checks the cited line was shown
                r.findings.append({"id": f"f{k}", "claim": "cited by the answer",
                                   "evidence": text[ln], "verified": True,
                                   "source": {"path": path, "line_start": ln, "line_end": ln}})
    except (ModelCallError, BudgetExhausted) as e:
        r.error = getattr(e, "reason", str(e))
        r.complete = False
        r.failed = [{"chunk": "t0001", "line_start": 1, "line_end": n, "reason": r.error}]
    u = budget.usage
    r.calls, r.prompt_tokens, r.completion_tokens = u.calls, u.prompt_tokens, u.completion_tokens
    r.wall_s = round(time.monotonic() - t0, 1)
    pct = 100 * n / total if total else 100
    r.note = (f"read lines 1-{n:,} of {total:,} ({pct:.1f}%)" if n < total
              else f"the whole file ({total:,} lines) fits one call")
    if r.error:
        r.note += f"; the call failed: {r.error}"
    r.statement = (f"Truncated read: lines 1-{n:,} of {total:,} were read; "
                   f"{max(0, total - n):,} lines were never read.")
    return r
