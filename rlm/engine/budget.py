"""One budget shared by every task of a run: tokens, calls and wall time.

Checked before each call (so a run stops cleanly instead of overshooting by a whole fan-out)
and charged with the server's real usage after it. The check uses what was really spent, so
the overshoot is at most the calls already in flight (bounded by --concurrency).
"""

from __future__ import annotations

import signal
import time
from dataclasses import dataclass, field

import anyio

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

    def exhausted(self) -> str | None:
        """Why no further call may start (None when one may)."""
        if self.interrupted:
            return "interrupted"
        if self.max_calls is not None and self.usage.calls >= self.max_calls:
            return f"call budget of {self.max_calls} spent"
        if self.max_tokens is not None and self.usage.total_tokens >= self.max_tokens:
            return f"token budget of {self.max_tokens:,} spent"
        if self.max_wall_s is not None and self.elapsed() > self.max_wall_s:
            return f"time budget of {self.max_wall_s:g}s spent"
        return None

    def charge(self, u: Usage) -> None:
        self.usage.add(u)

    def elapsed(self) -> float:
        return time.monotonic() - self.started


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
