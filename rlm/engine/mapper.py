"""Fan-out: run one isolated sub-call per item with bounded concurrency.

A fixed pool of `concurrency` workers pulls from one iterator, so memory stays flat however
many chunks there are. Every item ends with an outcome: its result, or the reason it failed
(retries exhausted, invalid output, budget, interrupted). Nothing is dropped silently.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Generic, Iterable, TypeVar

import anyio

from rlm.engine.budget import Budget
from rlm.errors import BudgetExhausted, ContextTooLong, ModelCallError, ModelUnreachable
from rlm.engine.outcomes import Status

I = TypeVar("I")


@dataclass
class Outcome(Generic[I]):
    """How one item ended: its status (what code branches on), its result when ok, and a
    reason for people when not."""

    item: I
    result: Any = None
    status: Status = Status.OK
    reason: str | None = None
    too_long: bool = False  # the server said the prompt does not fit (ContextTooLong)

    @property
    def ok(self) -> bool:
        return self.status is Status.OK

    @property
    def error(self) -> str | None:
        """The reason, when the item did not end ok (None when it did)."""
        return None if self.ok else (self.reason or self.status.value)


def _stopped(budget: Budget) -> Status:
    """The status of an item the budget kept from running."""
    return Status.INTERRUPTED if budget.interrupted else Status.NOT_RUN


async def map_items(items: Iterable[I], worker: Callable[[I], Awaitable[Any]], *,
                    key: Callable[[I], str], concurrency: int, budget: Budget,
                    on_outcome: Callable[[Outcome], None] | None = None,
                    cancel_scope: anyio.CancelScope | None = None,
                    keep_results: bool = True) -> list[Outcome]:
    """Run worker over items; returns outcomes in item order.

    keep_results=False (callers that consume outcomes through on_outcome) keeps no result and
    returns []: memory stays flat however many items there are.

    ModelUnreachable before any success is re-raised (a wrong --base-url is a usage error, not
    a run with 100% failed chunks); after a success it is recorded like any failed call."""
    if keep_results:
        items = list(items)
    outcomes: dict[str, Outcome] = {}  # only with keep_results
    in_flight: dict[str, I] = {}
    it = iter(items)
    any_ok = False
    unreachable: ModelUnreachable | None = None

    def done(o: Outcome) -> None:
        in_flight.pop(key(o.item), None)
        if keep_results:
            outcomes[key(o.item)] = o
        if on_outcome:
            on_outcome(o)

    async def loop() -> None:
        nonlocal any_ok, unreachable
        for item in it:
            if unreachable is not None:
                done(Outcome(item, status=Status.NOT_RUN, reason=f"not run: {unreachable}"))
                continue
            why = budget.exhausted()
            if why:
                if not budget.interrupted:
                    budget.stopped(key(item), why)
                done(Outcome(item, status=_stopped(budget), reason=f"not run: {why}"))
                continue
            in_flight[key(item)] = item
            try:
                res = await worker(item)
            except ModelCallError as e:
                done(Outcome(item, status=Status.FAILED, reason=e.reason,
                             too_long=isinstance(e, ContextTooLong)))
            except BudgetExhausted as e:
                if not budget.interrupted:
                    budget.stopped(key(item), str(e))
                n = e.attempts  # calls made and failed before the budget stopped the retries
                done(Outcome(item, status=Status.FAILED if n else _stopped(budget),
                             reason=f"not run: {e}" if not n else
                             f"stopped after {n} failed attempt{'s' if n != 1 else ''}: {e}"))
            except ModelUnreachable as e:
                if not any_ok:
                    unreachable = e
                done(Outcome(item, status=Status.FAILED, reason=str(e)))
            else:
                any_ok = True
                done(Outcome(item, result=res))

    scope = cancel_scope or anyio.CancelScope()
    workers = concurrency if not keep_results else min(concurrency, len(items))  # type: ignore[arg-type]
    with scope:
        async with anyio.create_task_group() as tg:
            for _ in range(max(1, workers)):
                tg.start_soon(loop)
    if unreachable is not None and not any_ok:
        raise unreachable
    # cancelled (Ctrl-C): the calls in flight and every item never taken from the iterator
    status = _stopped(budget)
    reason = "interrupted" if budget.interrupted else "not run: cancelled"
    for item in list(in_flight.values()) + list(it):
        done(Outcome(item, status=status, reason=reason))
    if not keep_results:
        return []
    return [outcomes[key(item)] for item in items]  # type: ignore[union-attr]
