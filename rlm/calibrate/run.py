"""The measurement: every trial through the fixed-pool mapper, the curve, the breakpoints."""

from __future__ import annotations

import time
from typing import Callable

import anyio

from rlm.calibrate.profile import PROFILE_VERSION, THRESHOLD, WINDOW_SHARE, save_profile
from rlm.calibrate.trials import (ANSWER_MAX_TOKENS, CalibAnswer, Trial, build_trial,
                                  levels_tokens, score_answer)
from rlm.engine.budget import Budget
from rlm.engine.call import call_json
from rlm.errors import BudgetExhausted, ModelCallError
from rlm.models.base import Limits, Model

DEFAULT_LEVELS = (0.1, 0.25, 0.4, 0.55, 0.7, 0.85, 0.97)
QUICK_LEVELS = (0.1, 0.4, 0.7, 0.97)
DEFAULT_REPS = 3


def breakpoint(curve: list[dict], key: str) -> dict | None:
    """Largest level with accuracy >= THRESHOLD such that every smaller level also made it."""
    best = None
    for row in sorted(curve, key=lambda r: r["level"]):
        if row[key] is None or row[key] < THRESHOLD:
            break
        best = {"level": row["level"], "tokens": row["tokens"], "accuracy": row[key]}
    return best


async def run_calibration(model: Model, levels: list[float] | None = None, reps: int = DEFAULT_REPS,
                          timeout: float = 120.0, concurrency: int = 1, seed: int = 7,
                          on_trial: Callable[[Trial], None] | None = None) -> dict:
    """Run both tasks at every level; return the profile (not yet saved)."""
    from rlm.engine.mapper import map_items

    t0 = time.monotonic()
    lv = levels_tokens(model.context_tokens, list(levels or DEFAULT_LEVELS))
    reps = max(1, int(reps))
    trials = [build_trial(model, task, level, rep, reps, tok, seed)
              for level, tok in lv for task in ("needle", "synthesis") for rep in range(reps)]
    budget = Budget()

    async def work(tr: Trial) -> Trial:
        try:
            res, _ = await call_json(model, tr.messages, CalibAnswer,
                                     Limits(max_tokens=ANSWER_MAX_TOKENS, timeout=timeout),
                                     budget, attempts=2)
            tr.answer = res.answer
            tr.correct = score_answer(res.answer, tr.expected)
        except (ModelCallError, BudgetExhausted) as e:
            tr.error = getattr(e, "reason", str(e))
        return tr

    def done(o) -> None:
        tr = o.item
        if not o.ok and tr.error is None:
            tr.error = o.error
        if on_trial:
            on_trial(tr)

    await map_items(trials, work, key=lambda t: f"{t.task}-{t.level}-{t.rep}",
                    concurrency=concurrency, budget=budget, on_outcome=done)
    curve = []
    for level, tok in lv:
        row: dict = {"level": level, "tokens": tok}
        for task in ("needle", "synthesis"):
            ts = [t for t in trials if t.task == task and t.level == level]
            row[task] = sum(t.correct for t in ts) / len(ts) if ts else None
            row[f"{task}_prompt_tokens"] = round(sum(t.prompt_tokens for t in ts) / max(1, len(ts)))
            row[f"{task}_errors"] = sum(1 for t in ts if t.error)
        curve.append(row)
    nb, sb = breakpoint(curve, "needle"), breakpoint(curve, "synthesis")
    u = budget.usage
    return {
        "version": PROFILE_VERSION,
        "model": model.name,
        "context_tokens": model.context_tokens,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "reps": reps,
        "threshold": THRESHOLD,
        "curve": curve,
        "needle_breakpoint": nb,
        "synthesis_breakpoint": sb,
        "usable_window_tokens": int(sb["tokens"] * WINDOW_SHARE) if sb else None,
        "usage": {"calls": u.calls, "prompt_tokens": u.prompt_tokens,
                  "completion_tokens": u.completion_tokens,
                  "wall_s": round(time.monotonic() - t0, 1)},
        "trials": [{"task": t.task, "level": t.level, "rep": t.rep, "prompt_tokens": t.prompt_tokens,
                    "expected": t.expected, "answer": t.answer[:200], "correct": t.correct,
                    "error": t.error} for t in trials],
    }


def calibrate(model: Model, levels: list[float] | None = None, reps: int = DEFAULT_REPS,
              timeout: float = 120.0, concurrency: int = 1, save: bool = True,
              on_trial: Callable[[Trial], None] | None = None) -> dict:
    prof = anyio.run(lambda: run_calibration(model, levels, reps, timeout, concurrency,
                                             on_trial=on_trial))
    if save:
        prof["_path"] = str(save_profile(prof))
    return prof
