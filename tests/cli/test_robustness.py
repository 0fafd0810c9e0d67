"""Careless and hostile input that must not abort, fill the disk or lie (issue 21, items 7-13,
16, 17): real processes, since pipes, permissions and locks are what is tested."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from array import array
from bisect import bisect_right

import pytest

from rlm.corpus.line_offsets import STEP, LineOffsets
from rlm.testing import run_cli
from tests.cli.test_cli import one_line_error

# Root reads every file; without these two capabilities it meets permissions like anyone else.
_NO_DAC = ["setpriv", "--bounding-set=-dac_override,-dac_read_search",
           "--inh-caps=-dac_override,-dac_read_search"]


def rlm(*args, env=None, stdin=subprocess.DEVNULL, prefix=(), timeout=120, shell_input=None):
    e = dict(os.environ, **(env or {}))
    if not prefix and stdin is subprocess.DEVNULL and shell_input is None:
        return run_cli(*args, env=e)  # in process: a real one only where pipes or privileges matter
    cmd = [*prefix, sys.executable, "-m", "rlm.cli", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=e,
                          stdin=stdin, input=shell_input)


def _unprivileged():
    """A prefix that makes permissions bite: nothing for a normal user, setpriv for root."""
    if os.geteuid() != 0:
        return ()
    if not shutil.which("setpriv"):
        pytest.skip("running as root and setpriv (util-linux) is missing: cannot drop DAC override")
    return tuple(_NO_DAC)


@pytest.mark.parametrize("command", ["ask", "audit"])
def test_unreadable_subfolder_is_skipped_and_named(tmp_path, command):
    root = tmp_path / "proj"
    (root / "locked").mkdir(parents=True)
    (root / "app.py").write_text("def main():\n    return 1\n")
    (root / "locked" / "hidden.py").write_text("x = 1\n")
    (root / "locked").chmod(0)
    try:
        args = ["ask", str(root), "what does main return?"] if command == "ask" else ["audit", str(root)]
        r = rlm(*args, "--json", prefix=_unprivileged())
    finally:
        (root / "locked").chmod(0o755)
    assert r.returncode == 3, (r.returncode, r.stderr[-500:])
    rep = json.loads(r.stdout)
    assert "locked/ (unreadable: Permission denied)" in rep["coverage"]["statement"]


def test_a_pipe_is_read_like_stdin(tmp_path):
    fifo = tmp_path / "feed"
    os.mkfifo(fifo)
    line = "Jan  1 00:00:0{} host sshd[1]: Failed password for root from 10.0.0.{} port 22 ssh2\n"
    writer = subprocess.Popen(["sh", "-c", f"cat > {fifo}"], stdin=subprocess.PIPE)
    writer.stdin.write("".join(line.format(i, i) for i in range(1, 4)).encode())
    writer.stdin.close()
    r = rlm("ask", str(fifo), "how many failed password lines?", "--json")
    writer.wait(timeout=10)
    assert r.returncode in (0, 3), r.stderr
    rep = json.loads(r.stdout)
    assert rep["corpus"]["lines"] == 3 and rep["corpus"]["bytes"] > 0


def test_process_substitution_is_read(tmp_path):
    if not shutil.which("bash"):
        pytest.skip("bash is needed for <(...)")
    cmd = f"{sys.executable} -m rlm.cli ask <(printf 'alpha\\nbeta\\ngamma\\n') 'beta?' --json"
    r = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=120)
    assert r.returncode in (0, 3), r.stderr
    assert json.loads(r.stdout)["corpus"]["lines"] == 3


def test_a_device_is_refused_by_name():
    msg = one_line_error(rlm("ask", "/dev/zero", "anything?"))
    assert "/dev/zero is a device" in msg


def test_binary_stdin_is_refused_at_the_first_block():
    # 64 MB of NUL bytes: refused after the first block, never spooled whole
    r = subprocess.run(f"head -c 64000000 /dev/zero | {sys.executable} -m rlm.cli ask - 'x?'",
                       shell=True, capture_output=True, text=True, timeout=120)
    msg = one_line_error(r)
    assert "binary" in msg


def test_spool_cap_is_one_total_and_stated(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    for i in (1, 2):  # each fits the cap alone; together they do not
        with gzip.open(logs / f"app.log.{i}.gz", "wt") as fh:
            fh.writelines(f"2024-01-01 00:00:{s % 60:02d} INFO step {s} done\n" for s in range(30000))
    (logs / "app.log").write_text("2024-01-01 00:01:00 INFO started\n")
    r = rlm("ask", str(logs), "anomalies?", "--json", env={"RLM_SPOOL_LIMIT": "1500K"})
    assert r.returncode == 3, r.stderr[-400:]
    statement = json.loads(r.stdout)["coverage"]["statement"]
    assert "app.log.2.gz (unreadable: " in statement
    assert "the spool cap of 1.46 MiB for this run was reached" in statement
    assert "RLM_SPOOL_LIMIT" in statement
    r = rlm("ask", "-", "x?", env={"RLM_SPOOL_LIMIT": "1K"}, stdin=None,
            shell_input="".join(f"line {i}\n" for i in range(1000)))
    assert "spool cap of 1 KiB" in one_line_error(r)


@pytest.mark.parametrize("tail", [b"", b"\n", b"\n\n"])
def test_sampled_line_index_equals_a_full_one(tail):
    data = b"".join(b"x" * (i % 7) + b"\n" for i in range(5 * STEP + 3)) + b"last" + tail
    full = array("q", [0] + [i + 1 for i, b in enumerate(data) if b == 10])
    if full[-1] == len(data):
        full.pop()
    blocks = (data[i:i + 97] for i in range(0, len(data), 97))
    idx = LineOffsets.scan(blocks, len(data), lambda: data)
    assert len(idx) == len(full)
    assert [idx[i] for i in range(len(full))] == list(full)
    assert all(idx.bisect_right(o) == bisect_right(full, o) for o in range(0, len(data) + 1, 5))
    assert len(idx._samples) == -(-len(full) // STEP)  # one offset per STEP lines, no more


def test_a_failed_piece_of_a_long_line_names_its_bytes(tmp_path, fake_server):
    p = tmp_path / "one-line.txt"
    words = [f"w{i:06d}" for i in range(60000)]  # one line of 480 KB: cut into pieces by bytes
    p.write_text(" ".join(words) + "\n")
    fake_server.on("MapResult", lambda req, text: {"findings": []})
    fake_server.fault("w030000 ", "500")  # the piece holding the middle word fails
    r = rlm("ask", str(p), "which words are odd?", "--strategy", "fanout", "--model", "fake",
            "--base-url", fake_server.url, "--json")
    assert r.returncode == 3, r.stderr[-500:]
    rep = json.loads(r.stdout)
    failed = rep["coverage"]["chunks_failed"]
    assert len(failed) == 1
    f = failed[0]
    assert (f["line_start"], f["line_end"]) == (1, 1)
    middle = (" ".join(words[:30000]) + " ").encode()
    assert f["byte_start"] <= len(middle) < f["byte_end"] <= p.stat().st_size
    assert f"{f['path']}:1-1 bytes {f['byte_start']}-{f['byte_end']}" in rep["coverage"]["statement"]


def test_a_question_longer_than_the_window_is_refused_before_any_call(tmp_path, fake_server):
    p = tmp_path / "notes.txt"
    p.write_text("alpha\nbeta\n" * 50)
    question = "why " + "so very long " * 3000 + "?"  # ~39k characters, ~10k tokens
    r = rlm("ask", str(p), question, "--model", "fake", "--base-url", fake_server.url)
    msg = one_line_error(r)
    assert f"({len(question):,} characters)" in msg and "shorten the question" in msg
    assert not [q for q in fake_server.requests if q["path"].endswith("/chat/completions")]
    # the same question with no model is answered by code (no call carries it)
    r = rlm("ask", str(p), question, "--model", "none")
    assert r.returncode in (0, 3) and "Traceback" not in r.stderr


def test_requests_that_time_out_stay_spent_against_the_token_cap(tmp_path, fake_server):
    p = tmp_path / "big.txt"
    p.write_text("".join(f"L{i:06d} alpha beta gamma delta relay queue seq={i}\n"
                         for i in range(1, 6001)))
    fake_server.fault("", "slow", seconds=5)  # every request: sent, never answered in time
    cap = 12000
    r = rlm("ask", str(p), "which lines mention relay?", "--strategy", "fanout", "--model",
            "fake", "--base-url", fake_server.url, "--timeout", "0.3", "--concurrency", "2",
            "--max-tokens", str(cap), "--json", timeout=300)
    assert r.returncode == 3, r.stderr[-500:]
    sent = [q for q in fake_server.requests if q["path"].endswith("/chat/completions")]
    assert sent, "the run sent nothing"
    # what a server that finishes every request it received could bill, at the least
    billable = sum(q["body"].get("max_tokens", 0) + len(q["user_text"]) // 4 for q in sent)
    assert billable <= cap, (len(sent), billable)
    assert "token budget" in json.loads(r.stdout)["coverage"]["statement"]


def test_when_every_endpoint_is_gone_the_run_stops_and_resumes(tmp_path, fake_server):
    import threading

    from rlm.testing import FakeServer

    p = tmp_path / "big.txt"
    p.write_text("".join(f"L{i:06d} alpha beta gamma delta relay queue seq={i}\n"
                         for i in range(1, 12001)))
    answered = []

    def answer_then_die(req, text):
        answered.append(1)
        if len(answered) == 3:  # the server goes away mid-run
            threading.Thread(target=fake_server.stop, daemon=True).start()
        return {"findings": []}

    fake_server.on("MapResult", answer_then_die)
    r = rlm("ask", str(p), "which lines mention relay?", "--strategy", "fanout", "--model",
            "fake", "--base-url", fake_server.url, "--concurrency", "2", "--timeout", "2",
            "--json", timeout=300)
    assert r.returncode == 3, r.stderr[-500:]
    rep = json.loads(r.stdout)
    cov = rep["coverage"]
    failed = [c for c in cov["chunks_failed"] if c["status"] == "failed"]
    not_run = [c for c in cov["chunks_failed"] if c["status"] == "not_run"]
    total = cov["chunks_total"]
    assert total > 20
    assert len(failed) <= 3 + 2  # the breaker's count, plus the calls already in flight
    assert len(not_run) >= total - cov["chunks_ok"] - len(failed) > 0
    assert "failed 3 calls in a row" in cov["statement"]
    assert "Stopped: the model server is gone" in rep["answer"]
    # a new server: the resume reads only what was not read, and completes
    with FakeServer() as again:
        again.on("MapResult", lambda req, text: {"findings": []})
        again.on("AnswerResult", lambda req, text: {"answer": "None found.", "cites": []})
        r2 = rlm("resume", rep["run_id"], "--base-url", again.url, "--json", timeout=300)
        assert r2.returncode == 0, r2.stderr[-500:]
        sent = [q for q in again.requests if q["schema_name"] == "MapResult"]
        assert len(sent) == total - cov["chunks_ok"]
