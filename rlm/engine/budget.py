"""One budget shared by every task of a run: tokens, calls and wall time.

A hard cap: every HTTP request (retries included) reserves one call and its worst-case tokens
(prompt estimate + max_tokens) *before* it is sent, through `reserve`, and the reservation is
settled with the server's real usage after it. Spent + reserved never passes a cap, so neither
retries nor calls in flight can overshoot it (tokens: as far as the prompt estimate holds, which
carries a margin).
"""

from __future__ import annotations

import signal
import time
from dataclasses import dataclass, field

import anyio

from rlm.errors import BudgetExhausted
from rlm.models.base import Usage


@dataclass
class Budget:
    max_tokens: int | None = None  # prompt + completion, all calls together
    max_calls: int | None = None
    max_wall_s: float | None = None
    usage: Usage = field(default_factory=Usage)
    started: float = field(default_factory=time.monotonic)
    interrupted: bool = False  # set on Ctrl-C: no new calls start
    interrupted_by: str = "Ctrl-C"  # what interrupted, for the coverage statement
    in_flight: int = 0  # requests reserved and not yet settled
    reserved_tokens: int = 0  # their worst-case tokens
    # worst-case tokens of requests sent and never answered (timeouts, drops): no usage came
    # back, yet the server may have run and billed them, so they stay spent against the cap
    unanswered_tokens: int = 0
    # the units a spent cap stopped (never run, or cut short in their retries) and which cap:
    # what the answer's "Stopped by the budget" line reads, instead of parsing reasons
    stopped_ids: set[str] = field(default_factory=set)
    stopped_by: str | None = None
    # circuit breaker: after this many calls in a row found no endpoint to answer them (each
    # after its own retries), no new call starts; the rest is "not run" and resumable
    breaker_after: int = 3
    down_streak: int = 0
    tripped: str | None = None

    def stopped(self, unit_id: str, why: str) -> None:
        self.stopped_ids.add(unit_id)
        self.stopped_by = why

    def exhausted(self, tokens: int = 1) -> str | None:
        """Why one more request of up to `tokens` tokens may not start (None when it may),
        counting what is spent and what requests in flight may still spend."""
        if self.interrupted:
            return "interrupted"
        if self.tripped:
            return self.tripped
        if self.max_calls is not None and self.usage.calls + self.in_flight + 1 > self.max_calls:
            return f"call budget of {self.max_calls} spent"
        if self.max_tokens is not None and (self.usage.total_tokens + self.unanswered_tokens
                                            + self.reserved_tokens + max(1, tokens)
                                            > self.max_tokens):
            return f"token budget of {self.max_tokens:,} spent"
        if self.max_wall_s is not None and self.elapsed() > self.max_wall_s:
            return f"time budget of {self.max_wall_s:g}s spent"
        return None

    def reserve(self, tokens: int) -> None:
        """Before one request is sent: hold one call and `tokens`, or raise BudgetExhausted."""
        why = self.exhausted(tokens)
        if why:
            raise BudgetExhausted(why)
        self.in_flight += 1
        self.reserved_tokens += tokens

    def release(self, requests: int, tokens: int) -> None:
        """After the requests reserved with `reserve` ended (charge their real usage too)."""
        self.in_flight -= requests
        self.reserved_tokens -= tokens

    def endpoint_down(self, reason: str) -> None:
        """A call failed because no endpoint could be reached (after its retries)."""
        self.down_streak += 1
        if self.down_streak >= self.breaker_after and not self.tripped:
            self.tripped = (f"the model's endpoints failed {self.down_streak} calls in a row "
                            f"({reason[:160]}); stopped calling them")

    def endpoint_up(self) -> None:
        self.down_streak = 0

    def charge(self, u: Usage) -> None:
        self.usage.add(u)

    def spend_unanswered(self, tokens: int) -> None:
        self.unanswered_tokens += tokens

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def remaining_s(self) -> float | None:
        return None if self.max_wall_s is None else max(0.0, self.max_wall_s - self.elapsed())


def watch_sigint(budget: Budget, scope: anyio.CancelScope, tg) -> None:
    """Ctrl-C: start no new call, cancel the calls in flight, and let the run report what
    finished (the caller then exits 3)."""

    async def watch() -> None:
        with anyio.open_signal_receiver(signal.SIGINT) as sigs:
            async for _ in sigs:
                budget.interrupted = True
                scope.cancel()

    tg.start_soon(watch)


def watch_event(budget: Budget, scope: anyio.CancelScope, tg, event: anyio.Event) -> None:
    """Like Ctrl-C, from code: when `event` is set (an MCP client cancelled its request), start
    no new call, cancel the calls in flight and let the run report what finished."""

    async def watch() -> None:
        await event.wait()
        budget.interrupted_by = "a cancelled request"
        budget.interrupted = True
        scope.cancel()

    tg.start_soon(watch)
