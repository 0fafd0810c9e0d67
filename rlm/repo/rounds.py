"""The generic round loop of the repository recipes: plan work, run it, and stop when two
consecutive rounds add nothing new, when nothing is left to plan, at ``max_rounds`` or when the
budget is spent. The stop reason is the recipe's own field (``StopReason``), never a reduce
value."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Awaitable, Callable, Sequence

from rlm.engine.budget import Budget
from rlm.schemas.repo_report import RoundInfo


class StopReason(str, Enum):
    NO_PROGRESS = "no_progress"  # two consecutive rounds added nothing new
    NOTHING_LEFT = "nothing_left"  # the planner had no more work
    BUDGET = "budget"  # tokens, calls, wall time or Ctrl-C
    MAX_ROUNDS = "max_rounds"
    DRY_RUN = "dry_run"
    NO_MODEL = "no_model"  # code only: nothing was to be read


@dataclass
class Rounds:
    """What the loop did: one RoundInfo per round run, and why it stopped."""

    rounds: list[RoundInfo] = field(default_factory=list)  # noqa: RUF009
    stopped: StopReason = StopReason.MAX_ROUNDS
    reason: str = ""


Plan = Callable[[int], tuple[Sequence, list[str]]]
RunRound = Callable[[int, Sequence], Awaitable[RoundInfo]]


async def run_rounds(plan: Plan, run_round: RunRound, budget: Budget, max_rounds: int,
                     quiet_rounds: int = 2, nothing_left: str = "nothing was left to do") -> Rounds:
    """Rounds 1..max_rounds: ``plan(n)`` returns (jobs, work lines); ``run_round(n, jobs)`` runs
    them and returns the round's RoundInfo (``new`` = findings it added, counted by code)."""
    out = Rounds(reason=f"stopped after max_rounds={max_rounds}")
    streak = 0
    for rnd in range(1, max(1, max_rounds) + 1):
        jobs, work = plan(rnd)
        if not jobs:
            out.stopped, out.reason = StopReason.NOTHING_LEFT, f"after round {rnd - 1} {nothing_left}"
            break
        why = budget.exhausted()
        if why:
            out.stopped, out.reason = StopReason.BUDGET, f"before round {rnd}: {why}"
            break
        info = await run_round(rnd, jobs)
        info.round, info.work, info.calls = rnd, list(work), len(jobs)
        out.rounds.append(info)
        if info.not_run or budget.interrupted:
            out.stopped = StopReason.BUDGET
            out.reason = (f"round {rnd}: " + (budget.exhausted() or "budget spent")
                          + "; calls that did not run are reported as failed")
            break
        streak = streak + 1 if info.new == 0 else 0
        if streak >= quiet_rounds:
            out.stopped = StopReason.NO_PROGRESS
            span = " and ".join(str(r) for r in range(rnd - quiet_rounds + 1, rnd + 1))
            out.reason = f"rounds {span} added nothing new (compared by code against the seen-set)"
            break
    return out
