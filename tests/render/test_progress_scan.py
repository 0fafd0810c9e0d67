"""Progress shows during the code scan too: bytes scanned, MB/s, and the chunks after it."""

from __future__ import annotations

import io
import time

from rich.console import Console

from rlm.render.progress import Progress


def test_scan_events_draw_bytes_and_rate_then_make_way_for_chunks():
    buf = io.StringIO()
    con = Console(file=buf, force_terminal=True, width=120)
    with Progress(enabled=True, console=con) as prog:
        prog.event("scan", {"what": "profile scan", "done": 0, "total": 200_000_000})
        time.sleep(0.6)
        prog.event("scan", {"what": "profile scan", "done": 50_000_000, "total": 200_000_000})
        assert prog.scanned == 50_000_000 and prog.scan_rate() > 10
        task = prog._p.tasks[0]
        assert task.description == "profile scan" and task.completed == 50_000_000
        assert "50.0/200.0 MB" in task.fields["count"] and "MB/s" in task.fields["extra"]
        prog._p.refresh()
        prog.event("plan", {"total": 7})
        assert [t.description for t in prog._p.tasks] == ["chunks"]
        assert prog._p.tasks[0].fields["count"] == "0/7"
    assert "profile scan" in buf.getvalue()
