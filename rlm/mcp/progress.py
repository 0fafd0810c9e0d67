"""Progress notifications and cancellation for long tool calls.

rlm runs report events through a plain callback (gate, plan, one per finished chunk, reduce).
`ProgressRelay` counts them and sends MCP progress notifications (chunks done/failed, tokens),
at most one every `interval` seconds and only when the count moved (the spec wants progress
to increase). `run_interruptible` runs the work shielded from the request's cancellation: when
the client cancels, it sets the run's interrupt event instead, so the run stops its calls,
names the unfinished chunks "interrupted", records its report (resumable) and only then does
the cancellation go on.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable, TypeVar

import anyio

T = TypeVar("T")
GRACE_S = 20.0  # how long a cancelled run may take to write its report


class ProgressRelay:
    def __init__(self, ctx: Any, interval: float = 0.25):
        self.ctx = ctx
        self.interval = interval
        self.total: int | None = None
        self.done = self.failed = self.tokens = 0
        self.phase = "starting"
        self._sent = -1.0
        self._changed = anyio.Event()

    def event(self, kind: str, data: dict) -> None:
        """The run's on_event callback (synchronous, called inside the run)."""
        if kind == "gate":
            self.phase = f"strategy {data.get('strategy')}"
        elif kind == "plan":
            self.total = data.get("total")
            self.phase = "reading"
        elif kind == "chunk":
            if data.get("ok"):
                self.done += 1
            else:
                self.failed += 1
            self.tokens = int(data.get("tokens") or self.tokens)
        elif kind == "reduce":
            self.phase = "merging findings"
        else:
            return
        self._changed.set()

    def message(self) -> str:
        total = "?" if self.total is None else f"{self.total:,}"
        return (f"{self.phase}: {self.done:,}/{total} chunks done, {self.failed:,} failed, "
                f"{self.tokens:,} tokens")

    async def pump(self) -> None:
        while True:
            await self._changed.wait()
            self._changed = anyio.Event()
            value = float(self.done + self.failed)
            if value > self._sent:
                self._sent = value
                try:
                    await self.ctx.report_progress(value, self.total, self.message())
                except Exception:  # noqa: BLE001 - a lost notification never fails the run
                    pass
            await anyio.sleep(self.interval)


async def run_interruptible(work: Callable[[anyio.Event], Awaitable[T]],
                            relay: ProgressRelay | None = None) -> T:
    """Run work(interrupt) to its end; a cancellation of the caller sets `interrupt` and waits
    (at most GRACE_S) for the work to wrap up before the cancellation propagates."""
    interrupt = anyio.Event()
    finished = anyio.Event()
    box: dict[str, Any] = {}
    shield = anyio.CancelScope(shield=True)

    async def runner() -> None:
        try:
            with shield:
                box["result"] = await work(interrupt)
        except BaseException as e:  # noqa: BLE001 - handed back to the caller below
            box["error"] = e
        finally:
            finished.set()

    async with anyio.create_task_group() as tg:
        if relay is not None:
            tg.start_soon(relay.pump)
        tg.start_soon(runner)
        try:
            await finished.wait()
        except anyio.get_cancelled_exc_class():
            interrupt.set()
            with anyio.move_on_after(GRACE_S, shield=True):
                await finished.wait()
            shield.cancel()
            raise
        tg.cancel_scope.cancel()  # the relay
    if "error" in box:
        raise box["error"]
    return box["result"]
