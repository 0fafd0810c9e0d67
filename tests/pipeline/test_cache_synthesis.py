"""Asking the same question twice reuses every cached call, the synthesis too; --no-cache
calls again."""

from __future__ import annotations

import json
import os
import re

from rlm.testing import run_cli

NUM = re.compile(r"^(\d+)\| (.*)$", re.M)


def test_second_ask_reuses_the_cached_synthesis(tmp_path, fake_server):
    p = tmp_path / "prose.txt"
    lines = [f"Paragraph {i} talks about routine matters and nothing else at all."
             for i in range(20_000)]
    lines[1234] = "The committee approved the PLANNED change to the schedule."
    p.write_text("\n".join(lines) + "\n")
    fake_server.on("MapResult", lambda r, t: {"findings": [
        {"line": int(m.group(1)), "claim": "the committee approved a change", "quote": "PLANNED"}
        for m in NUM.finditer(t) if "PLANNED" in m.group(2)]})
    fake_server.on("AnswerResult", lambda r, t: {"answer": "The committee approved a change.",
                                                 "cites": [1]})
    args = ["ask", str(p), "what did the committee do?",
            "--base-url", fake_server.url, "--model", "m", "--json", "--yes"]
    env = dict(os.environ)
    reports, sent = [], []
    for extra in ([], [], ["--no-cache"]):
        n0 = len(fake_server.requests)
        r = run_cli(*args, *extra, env=env)
        assert r.returncode == 0, r.stderr
        reports.append(json.loads(r.stdout))
        sent.append([x["schema_name"] for x in fake_server.requests[n0:]])
    assert "AnswerResult" in sent[0]
    assert sent[1] == []  # map calls and the synthesis all from the cache
    assert reports[1]["usage"]["cached_calls"] == reports[0]["usage"]["calls"]
    assert reports[1]["answer"] == reports[0]["answer"]
    assert "AnswerResult" in sent[2]  # --no-cache: fresh calls
