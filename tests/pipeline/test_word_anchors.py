"""No model: a question's plain words that are rare in the corpus become anchors (`ssh` in a
services file), counted by code; common words do not, so those runs rank, profile or fan out as
before. Through the CLI, with nothing configured (and once with a model, which is unchanged)."""

from __future__ import annotations

import json
import os

from rlm.pipeline.codeonly.word_anchors import word_candidates
from rlm.testing import run_cli


def rlm(*args):
    env = {k: v for k, v in os.environ.items() if k not in ("RLM_MODEL", "RLM_BASE_URL")}
    return run_cli(*args, env=env)


def services(path, n: int = 300, ssh_lines: int = 1) -> int:
    """An /etc/services-like table: comments that say 'port' often, one service a line. Returns
    the line of the first ssh entry."""
    rows = ["# Network services, Internet style", "# New ports are added on request",
            "# Each port below is a well-known port"]
    rows += [f"svc{i}\t\t{1000 + i}/tcp\t\t\t# service on port {1000 + i}" if i % 3 == 0 else
             f"svc{i}\t\t{1000 + i}/udp" for i in range(n)]
    at = len(rows) // 2
    for k in range(ssh_lines):
        rows.insert(at + 2 * k, "ssh\t\t22/tcp\t\t\t\t# SSH Remote Login Protocol")
    path.write_text("\n".join(rows) + "\n")
    return at + 1


def test_the_words_counted_are_content_words_of_a_question_naming_no_key():
    assert word_candidates("which port does ssh use?") == ["port", "ssh"]
    assert word_candidates("Where did the lighthouse keeper hide the brass key?") == [
        "lighthouse", "keeper", "hide", "brass", "key"]
    # a question naming a key (id or weak candidate): its plain words never stand in for it
    assert word_candidates("which port does keen-jacket use?") == []
    assert word_candidates("what happened to TXN-4444 on port 22?") == []


def test_a_rare_short_word_takes_the_grep_path_with_a_complete_timeline(tmp_path):
    p = tmp_path / "services"
    line = services(p)
    r = rlm("ask", str(p), "which port does ssh use?", "--json")
    assert r.returncode == 0, r.stderr + r.stdout
    rep = json.loads(r.stdout)
    assert rep["strategy"] == "grep" and rep["usage"]["calls"] == 0
    reasons = rep["gate"]["reasons"]
    assert any("'ssh' occurs on 1 of 304 lines: rare" in x for x in reasons), reasons
    assert any("'port' occurs on" in x and "too common" in x for x in reasons), reasons
    assert [(f["source"]["line_start"], f["verified"]) for f in rep["findings"]] == [(line, True)]
    assert "22/tcp" in rep["findings"][0]["evidence"]
    assert rep["coverage"]["complete"] and not rep["coverage"]["chunks_failed"]
    md = rlm("ask", str(p), "which port does ssh use?")
    assert md.returncode == 0 and f"line {line} · ssh" in md.stdout and "22/tcp" in md.stdout


def test_a_big_file_greps_too_and_a_common_word_still_fans_out(tmp_path):
    p = tmp_path / "services"
    line = services(p, n=9000)  # too big for a direct read: fan-out before
    r = rlm("ask", str(p), "which port does ssh use?", "--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["strategy"] == "grep"
    assert [f["source"]["line_start"] for f in rep["findings"]] == [line]
    services(p, n=9000, ssh_lines=80)  # ssh on 80 lines: too common to be an anchor
    r = rlm("ask", str(p), "which port does ssh use?", "--json")
    assert r.returncode == 3, r.stderr  # ranked passages: reading was needed
    rep = json.loads(r.stdout)
    assert rep["strategy"] == "fanout" and not rep["coverage"]["complete"]
    assert any("'ssh' occurs on 51 or more of" in x for x in rep["gate"]["reasons"])


def test_an_absent_named_key_is_not_replaced_by_plain_words(tmp_path):
    p = tmp_path / "services"
    services(p)
    r = rlm("ask", str(p), "which port does keen-jacket use?", "--json")
    assert r.returncode == 3, r.stderr
    rep = json.loads(r.stdout)
    assert rep["strategy"] == "direct"
    assert any("'keen-jacket' occurs on no line" in x for x in rep["gate"]["reasons"])
    assert not any("'port'" in x for x in rep["gate"]["reasons"])


def test_an_open_question_on_a_log_still_profiles(tmp_path):
    p = tmp_path / "auth.log"
    p.write_text("".join(f"2026-03-14T09:{i // 60:02d}:{i % 60:02d}Z INFO [web] request {i} ok\n"
                         for i in range(180))
                 + "2026-03-14T10:00:00Z ERROR [sshd] ssh login failed for root\n")
    r = rlm("ask", str(p), "which ssh errors happened?", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["strategy"] == "profile"


def test_with_a_model_a_small_file_is_still_read_directly(tmp_path, fake_server):
    p = tmp_path / "services"
    services(p)
    fake_server.on("AnswerResult", lambda req, text: {"answer": "ssh uses 22/tcp.", "cites": []})
    r = rlm("ask", str(p), "which port does ssh use?", "--base-url", fake_server.url,
            "--model", "m", "--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["strategy"] == "direct" and len(fake_server.requests) == 1
