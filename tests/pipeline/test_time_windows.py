"""A time window in the question restricts what the model is shown: on the direct path (a
small log, one call) and on a folder of logs (profiled as one log), through the fake server."""

from __future__ import annotations

import gzip
import re

import anyio

from rlm.api import AskOptions, ask_async
from rlm.models.openai_compat import OpenAICompatModel, reset_mode_cache

NUMBERED = re.compile(r"^(\d+)\| ", re.M)


def _model(fake_server):
    reset_mode_cache()
    return OpenAICompatModel("fake", fake_server.url, context_tokens=32_768, timeout=5.0,
                             max_attempts=2, backoff_base=0.01)


def _ask(path, q, fake_server):
    return anyio.run(lambda: ask_async(str(path), q, AskOptions(concurrency=2),
                                       model=_model(fake_server)))


def _shown(fake_server, schema: str) -> list[int]:
    return [int(x) for r in fake_server.requests if r["schema_name"] == schema
            for x in NUMBERED.findall(r["user_text"])]


def test_direct_read_shows_the_model_only_the_window(tmp_path, fake_server):
    p = tmp_path / "small.log"
    lines = [f"2026-03-14 12:{i // 6:02d}:{i % 6 * 10:02d} INFO [api] GET /v1/items/{i} 200"
             for i in range(360)]  # 12:00:00 .. 12:59:50, one line every 10 s
    lines[200] = "2026-03-14 12:33:20 ERROR [db] connection refused to 10.0.3.7:5432"
    lines[20] = "2026-03-14 12:03:20 ERROR [db] disk full on /var/lib/db"
    p.write_text("\n".join(lines) + "\n")
    fake_server.on("AnswerResult", lambda r, t: {"answer": "A refused database connection at "
                                                           "12:33:20 (line 201); disk full "
                                                           "(line 21).", "cites": [201, 21]})
    rep = _ask(p, "what happened between 12:30 and 12:40?", fake_server)
    assert rep.strategy == "direct"
    shown = _shown(fake_server, "AnswerResult")
    # 12:30:00 is line 181, 12:40:50 (the window ends at 12:40 inclusive) line 246
    assert shown == list(range(181, 247))
    [req] = [r for r in fake_server.requests if r["schema_name"] == "AnswerResult"]
    assert "connection refused" in req["user_text"] and "disk full" not in req["user_text"]
    by_line = {f.source.line_start: f for f in rep.findings}
    assert by_line[201].verified and not by_line[21].verified  # 21 was never shown
    assert rep.coverage.lines_read_by_model == 66
    assert "restricted to the time window between 12:30 and 12:40" in rep.coverage.statement
    assert "the other 294 lines, outside the window, were left out" in rep.coverage.statement
    assert "the other 294 lines, outside it, were not shown to the model" in rep.answer


def test_direct_read_of_an_empty_window_makes_no_call(tmp_path, fake_server):
    p = tmp_path / "small.log"
    p.write_text("".join(f"2026-03-14 12:00:{i:02d} INFO [api] ok\n" for i in range(50)))
    rep = _ask(p, "what happened between 15:00 and 15:30?", fake_server)
    assert rep.strategy == "direct" and fake_server.requests == []
    assert "No line of the log falls in the time window" in rep.answer


def _noise(day: int, n: int) -> list[str]:
    return [f"2024-03-{day:02d}T{i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z INFO  [api] "
            f"req={i:06x}a GET /v1/items status=200 {i % 90}ms" for i in range(n)]


def test_a_folder_of_logs_is_profiled_only_in_the_window(tmp_path, fake_server):
    """Rotated files, one per day: the window 00:20-00:30 applies to each day (each file is
    searched by its own times); rare lines outside it are never shown to the model."""
    root = tmp_path / "logs"
    root.mkdir()
    old = _noise(1, 3000)
    old[1230] = "2024-03-01T00:20:30Z WARN  [auth] user=jdoe role elevated to superadmin"
    with gzip.open(root / "api.log.2.gz", "wt") as f:
        f.write("\n".join(old) + "\n")
    mid = _noise(2, 3000)
    mid[700] = "2024-03-02T00:11:40Z INFO  [export] user=jdoe full export of customers"
    (root / "api.log.1").write_text("\n".join(mid) + "\n")
    new = _noise(3, 3000)
    new[2500] = "2024-03-03T00:41:40Z ERROR [ledger] panic: nil pointer dereference"
    new[1500] = "2024-03-03T00:25:00Z WARN  [audit] user=jdoe audit trail purged entries=4000"
    (root / "api.log").write_text("\n".join(new) + "\n")
    fake_server.on("GroupJudgement", lambda r, t: {"label": "error", "summary": "odd lines"})
    rep = _ask(root, "what happened between 00:20 and 00:30?", fake_server)
    assert rep.strategy == "profile"
    texts = "\n".join(r["user_text"] for r in fake_server.requests
                      if r["schema_name"] == "GroupJudgement")
    assert "role elevated" in texts and "audit trail purged" in texts
    assert "full export" not in texts and "panic" not in texts  # outside the window
    spots = {(f.source.path, f.source.line_start) for f in rep.findings}
    assert spots == {("api.log.2.gz", 1231), ("api.log", 1501)}
    st = rep.coverage.statement
    # each file's own lines 00:20:00-00:30:59 are 1201-1860
    assert "api.log.2.gz: 1,201-1,860" in st and "api.log.1: 1,201-1,860" in st
    assert "1,980 of 9,000 lines are in it; the other 7,020 lines" in st
    assert rep.coverage.lines_scanned_by_code == 1_980


def test_with_no_model_a_window_question_profiles_the_window(tmp_path):
    """No model, no anchors, not an open question: instead of ranking passages of the whole
    log, code profiles the window's lines (and finds its one error)."""
    p = tmp_path / "small.log"
    lines = [f"2026-03-14 12:{i // 6:02d}:{i % 6 * 10:02d} INFO [api] GET /v1/items/{i} 200"
             for i in range(360)]
    lines[200] = "2026-03-14 12:33:20 ERROR [db] connection refused to 10.0.3.7:5432"
    lines[20] = "2026-03-14 12:03:20 ERROR [db] disk full on /var/lib/db"
    p.write_text("\n".join(lines) + "\n")
    rep = anyio.run(lambda: ask_async(str(p), "summarize the log between 12:30 and 12:40",
                                      AskOptions()))
    assert rep.strategy == "profile" and rep.usage.calls == 0
    assert {f.source.line_start for f in rep.findings} == {201}  # not the disk-full line 21
    assert "time window between 12:30 and 12:40" in rep.coverage.statement
