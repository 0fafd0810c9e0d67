"""Progress on stderr (rich), only on a terminal and without --quiet.

The engine reports events through a plain callback; this is the only place that draws.
"""

from __future__ import annotations

import time

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress as RichProgress, TextColumn, \
    TimeRemainingColumn


class Progress:
    def __init__(self, enabled: bool):
        self.enabled = enabled
        self._p: RichProgress | None = None
        self._task = None
        self.done = self.failed = 0
        self.started = time.monotonic()

    def __enter__(self):
        if self.enabled:
            self._p = RichProgress(TextColumn("[bold]{task.description}"), BarColumn(),
                                   MofNCompleteColumn(), TextColumn("{task.fields[extra]}"),
                                   TimeRemainingColumn(), console=Console(stderr=True),
                                   transient=True)
            self._p.__enter__()
        return self

    def __exit__(self, *exc):
        if self._p:
            self._p.__exit__(*exc)

    def event(self, kind: str, data: dict) -> None:
        if not self._p:
            return
        if kind == "gate":
            self._p.console.print(f"[dim]strategy: {data['strategy']}[/]")
        elif kind == "plan":
            self._task = self._p.add_task("chunks", total=data["total"], extra="")
        elif kind == "chunk":
            if data.get("ok"):
                self.done += 1
            else:
                self.failed += 1
            if self._task is None:
                self._task = self._p.add_task("chunks", total=None, extra="")
            self._p.update(self._task, advance=1,
                           extra=f"failed {self.failed} · tokens {data.get('tokens', 0):,}")
        elif kind == "reduce":
            self._p.console.print(f"[dim]reduce: {data['msg']}[/]")
