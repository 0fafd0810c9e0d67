"""One rlm run in its own thread and event loop, so the server's loop stays free.

Code scans (probe, profile, chunk indexing) hold the event loop they run on for as long as they
take (about a second per 100 MB). Run on the server's loop, they would stall every other
request, the progress notifications and the processing of a cancellation. So each run gets a
worker thread with its own loop; the two loops talk only through thread-safe hand-offs:

- events: the run's on_event callback hands each event to the server loop (call_soon_threadsafe);
- sampling: SamplingModel sends its requests on the server loop (run_coroutine_threadsafe);
- interruption: the server sets the scan's stop flag (a threading.Event the scan checks every
  block) and, on the worker loop, the run's interrupt event (resumable ask) or cancels the run
  (audit, mine).
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Awaitable, Callable, TypeVar

import anyio

from rlm.engine import interrupt as scanctl

T = TypeVar("T")
Work = Callable[[anyio.Event, Callable[[str, dict], None]], Awaitable[T]]


class RunCancelled(Exception):
    """An audit or mine run was stopped because its request was cancelled (no report)."""


class Worker:
    def __init__(self, on_event: Callable[[str, dict], None], resumable: bool):
        self.server_loop = asyncio.get_running_loop()
        self._on_event = on_event
        self.resumable = resumable
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._interrupt: anyio.Event | None = None
        self._scope: anyio.CancelScope | None = None
        self._scan: scanctl.Control | None = None
        self._stopped = False

    def event(self, kind: str, data: dict) -> None:
        """The run's on_event, in the worker thread: note the scan control, hand the event on."""
        if self._scan is None:
            with self._lock:
                self._scan = scanctl.current()
                if self._stopped and self._scan is not None:
                    self._scan.stop.set()
        self.server_loop.call_soon_threadsafe(self._on_event, kind, data)

    def run(self, work: Work) -> Any:
        """In the worker thread: a fresh event loop for the whole run."""

        async def main():
            with self._lock:
                self._loop = asyncio.get_running_loop()
                self._interrupt = anyio.Event()
                self._scope = anyio.CancelScope()
                stopped = self._stopped
            if stopped:
                self._stop_here()
            with self._scope:
                return await work(self._interrupt, self.event)
            raise RunCancelled("the request was cancelled")

        return anyio.run(main)

    def _stop_here(self) -> None:  # on the worker loop
        if self.resumable:
            self._interrupt.set()
        else:
            self._scope.cancel()

    def stop(self) -> None:
        """From the server loop: stop the run (scan included) as soon as it can."""
        with self._lock:
            self._stopped = True
            scan, loop = self._scan, self._loop
        if scan is not None:
            scan.stop.set()
        if loop is not None:
            try:
                loop.call_soon_threadsafe(self._stop_here)
            except RuntimeError:  # the worker loop already closed: the run is over
                pass


def on_server_loop(loop: asyncio.AbstractEventLoop, coro_fn: Callable[[], Awaitable[T]]) -> Awaitable[T]:
    """Await coro_fn() on the server loop from a worker loop (or directly when already there)."""
    try:
        here = asyncio.get_running_loop()
    except RuntimeError:
        here = None
    if here is loop:
        return coro_fn()
    fut = asyncio.run_coroutine_threadsafe(coro_fn(), loop)
    return asyncio.wrap_future(fut)
