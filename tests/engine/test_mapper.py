"""The fan-out mapper (rlm.engine.mapper.map_items): every item ends with one outcome, however it
ended; concurrency stays bounded; the budget and a cancel stop new work without dropping items."""

from __future__ import annotations

import anyio
import pytest

from rlm.engine.budget import Budget
from rlm.engine.mapper import map_items
from rlm.engine.outcomes import Status
from rlm.errors import BudgetExhausted, ModelCallError, ModelUnreachable


def run(items, worker, **kw):
    kw.setdefault("budget", Budget())
    kw.setdefault("concurrency", 3)
    return anyio.run(lambda: map_items(items, worker, key=str, **kw))


def test_outcomes_in_item_order_with_bounded_concurrency():
    now = peak = 0

    async def worker(i):
        nonlocal now, peak
        now += 1
        peak = max(peak, now)
        await anyio.sleep(0.01 * (i % 3))  # finish out of order
        now -= 1
        return i * i

    out = run(range(12), worker)
    assert [o.item for o in out] == list(range(12))
    assert [o.result for o in out] == [i * i for i in range(12)]
    assert all(o.ok and o.error is None for o in out)
    assert peak == 3


def test_a_failed_call_is_recorded_with_its_reason_and_the_rest_go_on():
    async def worker(i):
        if i == 2:
            raise ModelCallError("HTTP 500 after 4 attempts")
        return i

    out = run(range(5), worker)
    assert [o.status for o in out] == [Status.OK] * 2 + [Status.FAILED] + [Status.OK] * 2
    assert out[2].error == "HTTP 500 after 4 attempts" and out[2].result is None


def test_an_unreachable_server_before_any_answer_is_raised():
    async def worker(i):
        raise ModelUnreachable("cannot connect to http://127.0.0.1:9/v1")

    with pytest.raises(ModelUnreachable):
        run(range(4), worker, concurrency=1)


def test_an_unreachable_server_after_an_answer_is_a_failed_item():
    async def worker(i):
        if i > 0:
            raise ModelUnreachable("connection refused")
        return "ok"

    out = run(range(3), worker, concurrency=1)
    assert out[0].ok
    assert out[1].status is Status.FAILED and out[1].reason == "connection refused"
    assert out[2].status is Status.FAILED


def test_a_spent_call_budget_leaves_the_rest_not_run_and_named():
    budget = Budget(max_calls=2)

    async def worker(i):
        budget.usage.calls += 1
        return i

    out = run(range(5), worker, budget=budget, concurrency=1)
    assert [o.status for o in out] == [Status.OK] * 2 + [Status.NOT_RUN] * 3
    assert out[4].reason == "not run: call budget of 2 spent"
    assert budget.stopped_ids == {"2", "3", "4"}


def test_budget_stopping_retries_after_failed_attempts_is_a_failure_not_a_skip():
    async def worker(i):
        e = BudgetExhausted("token budget of 100 spent")
        e.attempts = 2 if i == 0 else 0
        raise e

    out = run(range(2), worker, concurrency=1)
    assert out[0].status is Status.FAILED
    assert out[0].reason.startswith("stopped after 2 failed attempts")
    assert out[1].status is Status.NOT_RUN


def test_a_cancel_names_the_calls_in_flight_and_the_items_never_taken():
    seen: list[int] = []

    async def main():
        scope = anyio.CancelScope()

        async def worker(i):
            seen.append(i)
            if i == 1:
                scope.cancel()
            await anyio.sleep(1)
            return i

        return await map_items(range(6), worker, key=str, concurrency=2, budget=Budget(),
                               cancel_scope=scope)

    out = anyio.run(main)
    assert [o.item for o in out] == list(range(6))
    assert all(o.status is Status.NOT_RUN and o.reason == "not run: cancelled" for o in out)
    assert seen == [0, 1]


def test_streaming_outcomes_keep_no_results():
    got = []

    async def worker(i):
        return i

    out = run(iter(range(1000)), worker, keep_results=False, on_outcome=got.append)
    assert out == [] and sorted(o.item for o in got) == list(range(1000))
