"""The command line on bad input: one clear line, the right exit code, never a traceback."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest
from rlm.testing.cli import run_cli  # in-process: a process per call costs seconds


def rlm(*args, env=None, timeout=60):
    e = dict(os.environ, **(env or {}))
    return run_cli(*args, env=e)


def one_line_error(r, code=2):
    assert r.returncode == code, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    lines = [x for x in r.stderr.strip().splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("rlm:"), r.stderr
    return lines[0]


def test_missing_path(tmp_path):
    msg = one_line_error(rlm("ask", str(tmp_path / "nope.log"), "anomalies?"))
    assert "no such file" in msg


def test_empty_file(tmp_path):
    p = tmp_path / "empty.log"
    p.write_bytes(b"")
    assert "empty" in one_line_error(rlm("ask", str(p), "anomalies?"))


def test_binary_file_refused(tmp_path):
    p = tmp_path / "blob.bin"
    p.write_bytes(b"\x7fELF\x00\x01\x02" * 1000)
    assert "binary" in one_line_error(rlm("ask", str(p), "anomalies?"))


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read any file")
def test_unreadable_file(tmp_path):
    p = tmp_path / "secret.log"
    p.write_text("x\n")
    p.chmod(0)
    assert "permission" in one_line_error(rlm("ask", str(p), "anomalies?"))


def test_unreachable_base_url(tmp_path):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    p = tmp_path / "notes.txt"
    p.write_text("alpha\nbeta\n")
    url = f"http://127.0.0.1:{port}/v1"
    r = rlm("ask", str(p), "what?", "--base-url", url, "--model", "m", "--json")
    msg = one_line_error(r, 2)
    assert url in msg and r.stdout == ""


def test_invalid_utf8_is_declared(tmp_path, fake_server):
    p = tmp_path / "latin.txt"
    p.write_bytes(b"caf\xe9 au lait\nplain line\n")
    fake_server.on("AnswerResult", lambda req, t: {"answer": "It mentions coffee.", "cites": [1]})
    r = rlm("ask", str(p), "what drink?", "--base-url", fake_server.url, "--model", "m", "--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert any("invalid UTF-8" in d for d in rep["coverage"]["declared"])
    assert rep["findings"][0]["evidence"] == "caf\ufffd au lait"


def test_single_huge_line_is_cut_by_bytes_and_declared(tmp_path, fake_server):
    p = tmp_path / "oneline.txt"
    p.write_bytes(b"word " * 400_000)  # 2 MB, no newline
    fake_server.on("MapResult", lambda req, t: {"findings": []})
    r = rlm("ask", str(p), "what is in it?", "--base-url", fake_server.url, "--model", "m",
            "--concurrency", "16", "--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["strategy"] == "fanout" and rep["coverage"]["chunks_total"] > 10
    assert any("cut by bytes" in d for d in rep["coverage"]["declared"])
    assert rep["coverage"]["bytes_read_by_model"] == 2_000_000


def test_folder_with_a_mix(tmp_path, fake_server):
    d = tmp_path / "mix"
    d.mkdir()
    (d / "a.log").write_text("INFO ok\nERROR the DISK is full\n")
    (d / "empty.txt").write_text("")
    (d / "image.png").write_bytes(b"\x89PNG\x00\x00binary")
    (d / "latin.txt").write_bytes(b"the DISK caf\xe9\n")
    def mapper(req, t):
        import re
        return {"findings": [{"line": int(m.group(1)), "claim": f"the disk is named in: {m.group(2)}",
                              "quote": "DISK"} for m in re.finditer(r"^(\d+)\| (.*DISK.*)$", t, re.M)]}

    fake_server.on("MapResult", mapper)
    fake_server.on("AnswerResult", lambda req, t: {"answer": "The disk filled up.", "cites": [1]})
    r = rlm("ask", str(d), "what about the DISK?", "--base-url", fake_server.url, "--model", "m",
            "--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    skipped = {s["path"]: s["reason"] for s in rep["coverage"]["skipped"]}
    assert skipped == {"empty.txt": "empty", "image.png": "binary"}
    # small, but two files: one chunk per file rather than one direct read
    assert rep["corpus"]["files"] == 2 and rep["strategy"] == "fanout"
    assert rep["coverage"]["chunks_total"] == 2
    assert {(f["source"]["path"], f["source"]["line_start"]) for f in rep["findings"]} == {
        ("a.log", 2), ("latin.txt", 1)}
    assert "image.png (binary)" in rep["coverage"]["statement"]


def test_dry_run_makes_no_call(tmp_path, fake_server):
    p = tmp_path / "notes.txt"
    p.write_text("alpha\nbeta\n")
    r = rlm("ask", str(p), "what?", "--base-url", fake_server.url, "--model", "m", "--dry-run")
    assert r.returncode == 0 and "Strategy: **direct**" in r.stdout
    assert fake_server.requests == []


def test_ctrl_c_mid_fanout_reports_what_finished(tmp_path, fake_server):
    p = tmp_path / "prose.txt"
    p.write_text("".join(f"Sentence {i} about nothing in particular, said slowly.\n"
                         for i in range(20_000)))

    def slow(req, t):
        time.sleep(0.3)
        return {"findings": []}

    fake_server.on("MapResult", slow)
    e = dict(os.environ, RLM_DATA_DIR=str(tmp_path / "data"), RLM_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.Popen([sys.executable, "-m", "rlm.cli", "ask", str(p), "what?",
                             "--base-url", fake_server.url, "--model", "m", "--json",
                             "--concurrency", "2", "--no-cache"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e)
    deadline = time.time() + 30
    while len(fake_server.requests) < 4 and time.time() < deadline:
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 3, err
    assert "Traceback" not in err
    rep = json.loads(out)
    cov = rep["coverage"]
    assert 0 < cov["chunks_ok"] < cov["chunks_total"]
    assert any(c["reason"] == "interrupted" for c in cov["chunks_failed"]), cov["chunks_failed"][:3]
    assert cov["chunks_ok"] + len(cov["chunks_failed"]) == cov["chunks_total"]
    assert "interrupted" in cov["statement"]


def test_stdin_and_gzip_keep_original_line_numbers(tmp_path, fake_server):
    import gzip

    text = "".join(f"row {i} fine\n" for i in range(1, 50)) + "row 50 has the NEEDLE-77\n"
    fake_server.on("AnswerResult", lambda req, t: {"answer": "Row fifty holds it.", "cites": [50]})
    gz = tmp_path / "data.log.gz"
    gz.write_bytes(gzip.compress(text.encode()))
    for args, stdin in (([str(gz)], None), (["-"], text)):
        r = subprocess.run([sys.executable, "-m", "rlm.cli", "ask", *args, "where is NEEDLE-77?",
                            "--base-url", fake_server.url, "--model", "m", "--json"],
                           input=stdin, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        rep = json.loads(r.stdout)
        assert rep["corpus"]["lines"] == 50
        assert [(f["source"]["line_start"], f["evidence"]) for f in rep["findings"]] == [
            (50, "row 50 has the NEEDLE-77")]
