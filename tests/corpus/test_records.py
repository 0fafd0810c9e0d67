"""Multi-line records (Java stack traces, Python tracebacks) stay with their header line:
one candidate, one finding, cited as a line range."""

from __future__ import annotations

import anyio

from rlm.api import AskOptions, ask_async
from rlm.corpus.profile import profile_log
from rlm.corpus.records import record_span
from rlm.corpus.source import TextSource
from rlm.models.openai_compat import OpenAICompatModel, reset_mode_cache

JAVA = [
    "2017-06-09 20:11:00,001 WARN [IPC Client] org.apache.hadoop.ipc.Client: Retrying connect to server",
    "java.net.ConnectException: Connection refused to namenode-7",
    "\tat sun.nio.ch.SocketChannelImpl.checkConnect(Native Method)",
    "\tat org.apache.hadoop.net.NetUtils.connect(NetUtils.java:531)",
    "Caused by: java.io.IOException: Broken pipe on stream 42",
    "\t... 7 more",
]
PY = [
    "2017-06-09 20:12:00,001 WARN worker: job 99 gave up",
    "Traceback (most recent call last):",
    '  File "/srv/app/worker.py", line 88, in run',
    "    result = handler(job)",
    "KeyError: 'tenant'",
]


def write(path, n=3000, at=(1000, 2000)):
    lines = []
    for i in range(n):
        if i == at[0]:
            lines += JAVA
        elif i == at[1]:
            lines += PY
        lines.append(f"2017-06-09 20:10:{i % 60:02d},{i % 1000:03d} INFO worker: job {i} done in 0.{i % 7}s")
    path.write_text("\n".join(lines) + "\n")
    java_at = 1000 + 1
    py_at = 2000 + len(JAVA) + 1
    return java_at, py_at


def test_trace_lines_map_to_their_header(tmp_path):
    p = tmp_path / "app.log"
    java_at, py_at = write(p)
    with TextSource(p) as src:
        assert record_span(src, java_at + 3) == (java_at, java_at + len(JAVA) - 1)
        assert record_span(src, py_at) == (py_at, py_at + len(PY) - 1)
        assert record_span(src, 5) == (5, 5)
        prof = profile_log(src)
    # every trace line is a rare shape, yet each exception is one candidate: its header
    assert prof.candidates == [java_at, py_at]
    assert prof.record_end == {java_at: java_at + len(JAVA) - 1, py_at: py_at + len(PY) - 1}


def test_one_exception_is_one_finding_with_its_trace(tmp_path, fake_server):
    p = tmp_path / "app.log"
    java_at, py_at = write(p)
    fake_server.on("GroupJudgement", lambda req, text: {"label": "error", "summary": "a failure"})
    reset_mode_cache()
    model = OpenAICompatModel("fake", fake_server.url, context_tokens=8192, timeout=5.0,
                              max_attempts=2, backoff_base=0.01)
    rep = anyio.run(lambda: ask_async(str(p), "anomalies?", AskOptions(strategy="profile"),
                                      model=model))
    spans = sorted((f.source.line_start, f.source.line_end) for f in rep.findings)
    assert spans == [(java_at, java_at + len(JAVA) - 1), (py_at, py_at + len(PY) - 1)]
    java = next(f for f in rep.findings if f.source.line_start == java_at)
    assert java.evidence.splitlines() == JAVA
