"""Ctrl-C anywhere in a run, the code scan included.

While an ask runs, SIGINT goes to a plain signal handler (not to the event loop, which cannot
run while a scan of a big file holds it): the handler sets a flag that the scan loops look at
in `checkpoint()`, and asks the loop to cancel the model calls in flight. The scan then stops at
its next checkpoint (a few MB at most) with `ScanInterrupted`, and the run reports what it
finished. A second Ctrl-C stops at once (KeyboardInterrupt).

`checkpoint(done, total)` also feeds the scan's progress (bytes) to whoever shows it.
"""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Callable, Iterator


from rlm.errors import ScanInterrupted  # noqa: E402,F401 - raised here, defined with the others


@dataclass
class Control:
    stop: threading.Event = field(default_factory=threading.Event)
    on_progress: Callable[[str, int, int], None] | None = None
    what: str = "scan"
    done: int = 0  # bytes of the current scan
    total: int = 0
    started: float = field(default_factory=time.monotonic)


_current: ContextVar[Control | None] = ContextVar("rlm_scan_control", default=None)


def current() -> Control | None:
    return _current.get()


def checkpoint(done: int | None = None, total: int | None = None) -> None:
    """Called by scan loops every block: raise ScanInterrupted after Ctrl-C; report progress."""
    c = _current.get()
    if c is None:
        return
    if c.stop.is_set():
        raise ScanInterrupted(c.what)
    if done is not None:
        c.done, c.total = done, total or c.total
        if c.on_progress is not None:
            c.on_progress(c.what, c.done, c.total)


@contextmanager
def scanning(what: str, total: int) -> Iterator[Control | None]:
    """Name the scan that runs inside (for progress and for the report)."""
    c = _current.get()
    if c is not None:
        c.what, c.done, c.total, c.started = what, 0, total, time.monotonic()
    yield c


@contextmanager
def controlled(on_interrupt: Callable[[], None] | None = None,
               on_progress: Callable[[str, int, int], None] | None = None,
               handle_sigint: bool = True) -> Iterator[Control]:
    """Install the scan control (and, in the main thread, the SIGINT handler) for one run.
    `on_interrupt` runs in the event loop after the first Ctrl-C."""
    ctl = Control(on_progress=on_progress)
    token = _current.set(ctl)
    old = None
    if handle_sigint and threading.current_thread() is threading.main_thread():
        loop = asyncio.get_running_loop()

        def handler(signum, frame):
            if ctl.stop.is_set():  # the second Ctrl-C: stop now, whatever is running
                signal.signal(signal.SIGINT, signal.default_int_handler)
                raise KeyboardInterrupt
            ctl.stop.set()
            if on_interrupt is not None:
                loop.call_soon_threadsafe(on_interrupt)

        old = signal.signal(signal.SIGINT, handler)
    try:
        yield ctl
    finally:
        if old is not None:
            signal.signal(signal.SIGINT, old)
        _current.reset(token)
