"""Progress on stderr (rich), only on a terminal and without --quiet.

The engine reports events through a plain callback; this is the only place that draws. It shows
chunks done / failed / total, tokens so far (cache hits are counted apart, never as tokens),
calls in flight and the ETA; before that, while code scans the corpus, the bytes scanned, the
rate in MB/s and the ETA at that rate. Events: ``scan`` {what, done, total} (bytes), ``gate``
{strategy}, ``plan`` {total}, ``start`` {chunk}, ``chunk`` {ok, chunk, tokens, cached_calls},
``reduce`` {msg}. The counters are kept even when nothing is drawn (tests read them).
"""

from __future__ import annotations

import time

from rich.console import Console
from rich.progress import BarColumn, ProgressColumn, TextColumn, TimeRemainingColumn
from rich.text import Text
from rich.progress import Progress as RichProgress


class Progress:
    def __init__(self, enabled: bool, console: Console | None = None):
        self.enabled = enabled
        self._console = console
        self._p: RichProgress | None = None
        self._task = None
        self.done = self.failed = 0
        self.total: int | None = None
        self.tokens = self.cached = 0
        self._running: set[str] = set()
        self.started = time.monotonic()
        self.scanned = self.scan_total = 0  # bytes, while code scans the corpus
        self.scan_what = ""
        self._scan_task = None
        self._scan_started = 0.0
        self.estimate_s: float | None = None  # pre-flight seconds (event ``estimate``)
        self._est_t0 = self.started

    def overrun_note(self) -> str | None:
        """'3.4x its estimate (~12 s)' once the run has taken 3x its estimate (rlm.engine.estimate)."""
        from rlm.engine.estimate import overrun

        return overrun(time.monotonic() - self._est_t0, self.estimate_s)

    @property
    def in_flight(self) -> int:
        return len(self._running)

    def __enter__(self):
        if self.enabled:
            self._p = RichProgress(TextColumn("[bold]{task.description}"), BarColumn(),
                                   TextColumn("{task.fields[count]}"),
                                   TextColumn("{task.fields[extra]}"),
                                   TextColumn("ETA"), TimeRemainingColumn(), _Overrun(self),
                                   console=self._console or Console(stderr=True),
                                   transient=True, refresh_per_second=4)
            self._p.__enter__()
        return self

    def __exit__(self, *exc):
        if self._p:
            self._p.__exit__(*exc)
            self._p = None

    def count(self) -> str:
        return f"{self.done + self.failed}/{self.total if self.total is not None else '?'}"

    def extra(self) -> str:
        parts = [f"failed {self.failed}" if self.failed else "", f"{self.tokens:,} tokens",
                 f"{self.cached} cached" if self.cached else "", f"{self.in_flight} in flight"]
        return " · ".join(p for p in parts if p)

    def scan_rate(self) -> float | None:
        """MB/s of the scan so far (None in its first half second)."""
        dt = time.monotonic() - self._scan_started
        return self.scanned / 1e6 / dt if dt > 0.5 else None

    def _scan(self, data: dict) -> None:
        what, done, total = data.get("what", "scan"), data.get("done", 0), data.get("total", 0)
        if what != self.scan_what or done < self.scanned:
            self.scan_what, self._scan_started = what, time.monotonic()
        self.scanned, self.scan_total = done, total
        if not self._p:
            return
        rate = self.scan_rate()
        count = f"{done / 1e6:,.1f}" + (f"/{total / 1e6:,.1f} MB" if total else " MB")
        extra = f"{rate:,.0f} MB/s" if rate else ""
        if self._scan_task is None:
            self._scan_task = self._p.add_task(what, total=total or None, count=count,
                                               extra=extra)
        self._p.update(self._scan_task, description=what, completed=done,
                       total=total or None, count=count, extra=extra)

    def _scan_done(self) -> None:
        if self._p and self._scan_task is not None:
            self._p.remove_task(self._scan_task)
        self._scan_task = None

    def event(self, kind: str, data: dict) -> None:
        if kind == "scan":
            return self._scan(data)
        if kind in ("plan", "start") and self._scan_task is not None:
            self._scan_done()  # the scan is over: the model calls begin
        if kind == "estimate":
            self.estimate_s, self._est_t0 = data.get("seconds"), time.monotonic()
            self.total = self.total or data.get("calls")
        if kind == "plan":
            self.total = data.get("total")
        elif kind == "start":
            self._running.add(data.get("chunk", ""))
        elif kind == "chunk":
            self._running.discard(data.get("chunk", ""))
            if data.get("ok"):
                self.done += 1
            else:
                self.failed += 1
            self.tokens = data.get("tokens", self.tokens)
            self.cached = data.get("cached_calls", self.cached)
        if not self._p:
            return
        if kind == "gate":
            self._p.console.print(f"[dim]strategy: {data['strategy']}[/]")
        elif kind in ("plan", "estimate"):
            if self._task is None:
                self._task = self._p.add_task("chunks", total=self.total, extra=self.extra(),
                                              count=self.count())
            else:
                self._p.update(self._task, total=self.total, count=self.count())
        elif kind in ("start", "chunk"):
            if self._task is None:
                self._task = self._p.add_task("chunks", total=self.total, extra="",
                                              count=self.count())
            self._p.update(self._task, completed=self.done + self.failed, extra=self.extra(),
                           count=self.count())
        elif kind == "reduce":
            self._p.console.print(f"[dim]reduce: {data['msg']}[/]")


class _Overrun(ProgressColumn):
    """Says, while the run goes on, that it has taken 3x (or more) its pre-flight estimate."""

    def __init__(self, prog: Progress):
        super().__init__()
        self.prog = prog

    def render(self, task) -> Text:
        note = self.prog.overrun_note()
        return Text(f"slower than estimated: {note}" if note else "", style="bold yellow")


def confirm_long_run(prog: Progress, yes: bool):
    """`RunOptions.confirm` for the CLI: print the long-run warning on stderr; ask to go on only
    on a terminal and without --yes (the progress display steps aside while asking)."""
    import sys

    def confirm(msg: str) -> bool:
        Console(stderr=True, highlight=False, soft_wrap=True).print(f"rlm: {msg}.", markup=False)
        if yes or not (sys.stdin.isatty() and sys.stderr.isatty()):
            return True
        live = prog._p
        if live is not None:
            live.stop()
        try:
            import typer

            return typer.confirm("Continue?", default=True, err=True)
        finally:
            if live is not None:
                live.start()
    return confirm
