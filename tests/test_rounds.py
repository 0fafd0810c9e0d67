"""The generic round loop of audit and mine (rlm/repo/rounds.py) and the audit's lens data."""

from __future__ import annotations

import anyio

from rlm.repo.audit.lenses import LENSES, lenses
from rlm.engine.budget import Budget
from rlm.repo.rounds import StopReason, run_rounds
from rlm.schemas.repo_report import RoundInfo


def _loop(new_per_round: list[int], jobs_per_round: list[int] | None = None,
          budget: Budget | None = None, max_rounds: int = 10):
    ran: list[int] = []
    jobs_per_round = jobs_per_round or [1] * len(new_per_round)

    def plan(rnd):
        n = jobs_per_round[rnd - 1] if rnd <= len(jobs_per_round) else 0
        return [f"job{rnd}.{i}" for i in range(n)], [f"round {rnd} work"]

    async def run_round(rnd, jobs):
        ran.append(rnd)
        return RoundInfo(round=rnd, new=new_per_round[rnd - 1])

    out = anyio.run(lambda: run_rounds(plan, run_round, budget or Budget(), max_rounds))
    return out, ran


def test_stops_after_two_rounds_that_find_nothing_new():
    out, ran = _loop([5, 0, 2, 0, 0, 7])
    assert ran == [1, 2, 3, 4, 5] and out.stopped is StopReason.NO_PROGRESS
    assert "rounds 4 and 5 added nothing new" in out.reason
    assert [(r.round, r.calls, r.work) for r in out.rounds][-1] == (5, 1, ["round 5 work"])


def test_stops_when_nothing_is_left_to_plan_or_at_max_rounds():
    out, ran = _loop([3, 1, 1], jobs_per_round=[2, 1, 0])
    assert ran == [1, 2] and out.stopped is StopReason.NOTHING_LEFT
    assert out.reason.startswith("after round 2")
    out, ran = _loop([1] * 10, max_rounds=4)
    assert ran == [1, 2, 3, 4] and out.stopped is StopReason.MAX_ROUNDS


def test_a_spent_budget_stops_before_the_next_round():
    b = Budget(max_calls=0)
    out, ran = _loop([1, 1, 1], budget=b)
    assert ran == [] and out.stopped is StopReason.BUDGET and out.reason.startswith("before round 1")


def test_jobs_the_budget_kept_from_running_end_the_rounds():
    async def run_round(rnd, jobs):
        return RoundInfo(round=rnd, new=1, not_run=1 if rnd == 2 else 0)

    out = anyio.run(lambda: run_rounds(lambda r: (["j"], []), run_round, Budget(), 9))
    assert len(out.rounds) == 2 and out.stopped is StopReason.BUDGET


def test_lens_rules_are_data_and_compile():
    ls = lenses()
    assert LENSES == ("structure", "risks", "tests")
    assert ls["risks"].kind == "risk" and all(r.severity for r in ls["risks"].rules)
    assert ls["tests"].tests_only and not ls["structure"].tests_only
    assert ls["risks"].match('digest = hashlib.sha1(salt).hexdigest()').why == "weak hash"
    assert ls["structure"].match("MAX_RETRIES = 3").why == "constant"
    assert ls["structure"].match("x = compute()") is None
