"""Progress notifications and cancellation for long tool calls.

rlm runs report events through a plain callback (gate, plan, one per finished chunk, reduce).
`ProgressRelay` counts them and sends MCP progress notifications (chunks done/failed, tokens),
at most one every `interval` seconds and only when the count moved (the spec wants progress
to increase). `run_in_worker` runs the work in its own thread (rlm.mcp.worker), shielded from
the request's cancellation: when the client cancels, it stops the run instead, so an ask stops
its scan and its calls, names the unfinished chunks "interrupted", records its report
(resumable) and only then does the cancellation go on.
"""

from __future__ import annotations

from typing import Any, TypeVar

import anyio

from rlm.mcp.worker import Work, Worker

T = TypeVar("T")
GRACE_S = 20.0  # how long a cancelled run may take to write its report


class ProgressRelay:
    def __init__(self, ctx: Any, interval: float = 0.25):
        self.ctx = ctx
        self.interval = interval
        self.total: int | None = None
        self.done = self.failed = self.tokens = 0
        self.phase = "starting"
        self.scan: tuple[str, int, int] | None = None  # a code scan before any unit: what, bytes
        self.scans = 0  # code scans started before the first plan: each adds one to the value
        self._sent = -1.0
        self._changed = anyio.Event()

    def event(self, kind: str, data: dict) -> None:
        """The run's on_event callback (synchronous, called inside the run)."""
        if kind == "gate":
            self.phase = f"strategy {data.get('strategy')}"
        elif kind == "plan":  # audit plans once per round: totals add up
            t = data.get("total")
            self.total = None if t is None else self.scans + self.done + self.failed + int(t)
            self.phase = "reading"
        elif kind == "chunk":  # typed UnitDone (status) or an older plain dict (ok)
            if data.get("status", "ok" if data.get("ok") else "failed") == "ok":
                self.done += 1
            else:
                self.failed += 1
            self.tokens = int(data.get("tokens") or self.tokens)
        elif kind == "reduce":
            self.phase = "merging findings"
        elif kind == "scan" and self.total is None:
            what, done = str(data.get("what") or "scan"), int(data.get("done") or 0)
            if self.scan is None or what != self.scan[0] or done < self.scan[1]:
                self.scans += 1
            self.scan = (what, done, int(data.get("total") or 0))
        else:
            return
        self._changed.set()

    def value(self) -> float:
        """Monotone: one per code scan before the first plan (plus the running scan's fraction),
        then one per finished unit."""
        if self.total is None and self.scan and self.scan[2]:
            return self.scans - 1 + min(0.99, self.scan[1] / self.scan[2])
        return float(self.scans + self.done + self.failed)

    def message(self) -> str:
        if self.total is None and self.scan and self.scan[2]:
            what, done, total = self.scan
            return f"{what}: {done / 1e6:,.0f} of {total / 1e6:,.0f} MB scanned by code"
        total = "?" if self.total is None else f"{self.total:,}"
        return (f"{self.phase}: {self.done:,}/{total} chunks done, {self.failed:,} failed, "
                f"{self.tokens:,} tokens")

    async def pump(self) -> None:
        while True:
            await self._changed.wait()
            self._changed = anyio.Event()
            await self.flush()
            await anyio.sleep(self.interval)

    async def flush(self) -> None:
        """Send the current state if it moved (also once at the end, before the result)."""
        value = self.value()
        if value > self._sent:  # the spec wants progress to increase
            self._sent = value
            try:
                await self.ctx.report_progress(value, self.total, self.message())
            except Exception:  # noqa: BLE001 - a lost notification never fails the run
                pass


async def run_in_worker(work: Work[T], relay: ProgressRelay, resumable: bool) -> T:
    """Run work(interrupt, on_event) in a worker thread (rlm.mcp.worker) while relaying its
    progress. A cancellation of the caller stops the run; a resumable run (ask) then gets up to
    GRACE_S to record its report before the cancellation goes on."""
    w = Worker(relay.event, resumable)
    finished = anyio.Event()
    box: dict[str, Any] = {}
    shield = anyio.CancelScope(shield=True)

    async def runner() -> None:
        try:
            with shield:
                box["result"] = await anyio.to_thread.run_sync(w.run, work,
                                                               abandon_on_cancel=True)
        except BaseException as e:  # noqa: BLE001 - handed back to the caller below
            box["error"] = e
        finally:
            finished.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(relay.pump)
        tg.start_soon(runner)
        try:
            await finished.wait()
        except anyio.get_cancelled_exc_class():
            w.stop()
            with anyio.move_on_after(GRACE_S if resumable else 2.0, shield=True):
                await finished.wait()
            shield.cancel()  # past the grace: leave the thread to end on its own
            raise
        tg.cancel_scope.cancel()  # the relay
    if "error" in box:
        raise box["error"]
    await relay.flush()
    return box["result"]
