"""A time window restricts the fan-out over a log to the window's lines."""

from __future__ import annotations

import re

import anyio

from rlm.api import AskOptions, ask_async
from rlm.corpus.source import TextSource
from rlm.corpus.timewindow import parse_window, window_lines
from rlm.fixtures.log import write_log
from rlm.models.openai_compat import OpenAICompatModel, reset_mode_cache

NUMBERED = re.compile(r"^(\d+)\| ", re.M)


def test_fanout_reads_only_the_window(tmp_path, fake_server):
    p = tmp_path / "app.log"
    key = write_log(p, lines=20_000)
    panic = [n for n in key["needles"] if n["kind"] == "panic"][1]
    hhmm = panic["text"][11:16]
    q = f"summarize the traffic between {hhmm} and {hhmm}"
    with TextSource(p) as src:
        (a, b), = window_lines(src, parse_window(q))
    fake_server.on("MapResult", lambda req, text: {"findings": []})
    fake_server.on("AnswerResult", lambda r, t: {"answer": "Routine traffic.", "cites": []})
    reset_mode_cache()
    model = OpenAICompatModel("fake", fake_server.url, context_tokens=8192, timeout=5.0,
                              max_attempts=2, backoff_base=0.01)
    rep = anyio.run(lambda: ask_async(str(p), q, AskOptions(concurrency=4), model=model))
    assert rep.strategy == "fanout"
    shown = [int(x) for r in fake_server.requests if r["schema_name"] == "MapResult"
             for x in NUMBERED.findall(r["user_text"])]
    assert shown and min(shown) == a and max(shown) == b  # every window line, nothing else
    assert len(shown) == b - a + 1
    assert "restricted to the time window" in rep.coverage.statement
