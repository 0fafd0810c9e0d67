"""Runs that survive: SIGKILL midway then resume; injected chunk failures then resume.

Real subprocesses (`python -m rlm.cli`) against the real fake server; chunks are told apart by
the line range in their user message ("Excerpt (PATH:A-B)").
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter

import pytest
from tests.test_store import (
    QUESTION,
    chunk_of,
    cli_env,
    map_requests,
    map_responder,
    rlm,
    write_corpus,
)

from rlm.store import RunStore


def _wait(pred, timeout: float, what: str) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _chunk_events(run_id: str | None = None) -> int:
    from rlm.store import data_dir

    if not (data_dir() / "runs.sqlite3").exists():
        return 0
    store = RunStore()
    try:
        rows = store.execute("SELECT count(*) FROM events WHERE kind = 'chunk'" +
                             (" AND run_id = ?" if run_id else ""), (run_id,) if run_id else ())
        return rows[0][0]
    finally:
        store.close()


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_sigkill_midway_then_resume_recalls_only_unfinished_chunks(fake_server, tmp_path):
    corpus = write_corpus(tmp_path / "big.txt", lines=6000)
    answer_first = 6  # chunks answered before the kill; the next ones hang until released
    release = threading.Event()
    seen: list[str] = []
    lock = threading.Lock()

    def responder(req, text):
        key = chunk_of(text)
        with lock:
            if key not in seen:
                seen.append(key)
            hang = not release.is_set() and seen.index(key) >= answer_first
        if hang:
            release.wait(30)
        return map_responder(req, text)

    fake_server.on("MapResult", responder)
    fake_server.on("AnswerResult", lambda req, text: {"answer": "Every excerpt was cited.",
                                                      "cites": [1]})
    env = cli_env()
    proc = subprocess.Popen(
        [sys.executable, "-m", "rlm.cli", "ask", str(corpus), QUESTION, "--strategy", "fanout",
         "--base-url", fake_server.url, "--model", "fake", "--concurrency", "2", "--json"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        # two calls hang in flight; the answered chunks are in the run record
        _wait(lambda: len(map_requests(fake_server)) >= answer_first + 2, 15, "calls in flight")
        _wait(lambda: _chunk_events() >= answer_first, 10, "chunk events in the run record")
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL
    before = map_requests(fake_server)
    finished = {chunk_of(r) for r in before if r["status"] == 200}
    in_flight = {chunk_of(r) for r in before if r["status"] is None}
    assert len(finished) == answer_first and len(in_flight) == 2, [(chunk_of(r), r["status"]) for r in before]
    n0 = len(fake_server.requests)
    release.set()

    runs = json.loads(rlm("runs", "--json", env=env).stdout)
    assert runs[0]["status"] == "died" and runs[0]["chunks_ok"] == answer_first
    killed_id = runs[0]["id"]
    show = rlm("show", killed_id, env=env)
    assert show.returncode == 0 and killed_id in show.stdout and "no report" in show.stdout
    assert f"rlm resume {killed_id}" in show.stdout

    p = rlm("resume", "last", "--json", env=env)
    assert p.returncode == 0, p.stderr
    rep = json.loads(p.stdout)
    cov = rep["coverage"]
    assert cov["complete"] is True and cov["chunks_ok"] == cov["chunks_total"] > answer_first + 2
    assert rep["usage"]["cached_calls"] >= answer_first
    again = Counter(chunk_of(r) for r in map_requests(fake_server, n0))
    assert not finished & set(again), f"finished chunks were called again: {finished & set(again)}"
    assert in_flight <= set(again)  # the calls lost in flight were made again
    assert max(again.values()) == 1
    assert len(finished) + len(again) == cov["chunks_total"]
    assert cov["lines_read_by_model"] == cov["lines_total"] == 6000
    assert rep["findings"] and all(f["verified"] for f in rep["findings"])

    rec = RunStore().get(rep["run_id"])
    assert rec["resumed_from"] == killed_id and rec["status"] == "done"


def test_three_failed_chunks_then_resume_completes(fake_server, tmp_path):
    corpus = write_corpus(tmp_path / "big.txt", lines=6000)
    fake_server.on("MapResult", map_responder)
    env = cli_env()
    targets = ["L002000 ", "L003500 ", "L005000 "]  # three lines in three different chunks
    for t in targets:
        fake_server.fault(t, "500")
    args = ["ask", str(corpus), QUESTION, "--strategy", "fanout", "--base-url", fake_server.url,
            "--model", "fake", "--concurrency", "4", "--json"]
    p = rlm(*args, env=env)
    assert p.returncode == 3, p.stderr
    rep = json.loads(p.stdout)
    failed = rep["coverage"]["chunks_failed"]
    assert len(failed) == 3 and rep["coverage"]["complete"] is False
    assert all("500" in f["reason"] for f in failed)
    # prompts name the file by its name, not its spelling (so resumes hit the cache)
    failed_ranges = {f"{os.path.basename(f['path'])}:{f['line_start']}-{f['line_end']}" for f in failed}
    first_ok = {chunk_of(r) for r in map_requests(fake_server) if r["status"] == 200}
    assert not failed_ranges & first_ok

    fake_server.clear_faults()
    n0 = len(fake_server.requests)
    p = rlm(*args, "--resume", rep["run_id"][-6:], env=env)
    assert p.returncode == 0, p.stderr
    rep2 = json.loads(p.stdout)
    assert rep2["coverage"]["complete"] is True and not rep2["coverage"]["chunks_failed"]
    again = [chunk_of(r) for r in map_requests(fake_server, n0)]
    assert sorted(again) == sorted(failed_ranges)  # only those three chunks, once each
    assert rep2["usage"]["cached_calls"] == rep["coverage"]["chunks_total"] - 3

    # the record: one failed run, one complete run resumed from it
    runs = {r["id"]: r for r in json.loads(rlm("runs", "--json", env=env).stdout)}
    assert runs[rep["run_id"]]["status"] == "incomplete"
    assert runs[rep["run_id"]]["chunks_failed"] == 3
    assert runs[rep2["run_id"]]["status"] == "done"
    assert runs[rep2["run_id"]]["resumed_from"] == rep["run_id"]


def test_resume_refuses_another_question(fake_server, tmp_path):
    corpus = write_corpus(tmp_path / "small.txt", lines=800)
    fake_server.on("MapResult", map_responder)
    base = ["--strategy", "fanout", "--base-url", fake_server.url, "--model", "fake"]
    p = rlm("ask", str(corpus), QUESTION, *base, "--json")
    assert p.returncode == 0, p.stderr
    p = rlm("ask", str(corpus), "a different question?", *base, "--resume", "last")
    assert p.returncode == 2 and "same question" in p.stderr
    p = rlm("resume", "no-such-run")
    assert p.returncode == 2 and "no recorded run" in p.stderr


def test_a_run_is_resumed_once_at_a_time(fake_server, tmp_path):
    corpus = write_corpus(tmp_path / "big.txt", lines=6000)
    env = cli_env()
    fake_server.on("MapResult", map_responder)
    fake_server.fault("L003500 ", "500")
    args = ["ask", str(corpus), QUESTION, "--strategy", "fanout", "--base-url", fake_server.url,
            "--model", "fake", "--json"]
    first = rlm(*args, env=env)
    assert first.returncode == 3, first.stderr
    run_id = json.loads(first.stdout)["run_id"]
    fake_server.clear_faults()
    release, hanging = threading.Event(), threading.Event()

    def hang_then_answer(req, text):
        hanging.set()
        release.wait(60)
        return map_responder(req, text)

    fake_server.on("MapResult", hang_then_answer)
    proc = subprocess.Popen([sys.executable, "-m", "rlm.cli", "resume", run_id, "--json"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait(hanging.is_set, 60, "the first resume to call the model")
        second = rlm("resume", run_id, "--json", env=env)
        assert second.returncode == 2, second.stderr
        assert f"run {run_id} is being resumed already (pid {proc.pid})" in second.stderr
        assert second.stdout == ""
    finally:
        release.set()
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert json.loads(out)["coverage"]["complete"] is True
    # the lock went with the first resume: resuming again is allowed (and all from cache)
    third = rlm("resume", run_id, "--json", env=env)
    assert third.returncode == 0, third.stderr


def test_resume_of_a_relative_path_reuses_every_answered_call(fake_server, tmp_path):
    write_corpus(tmp_path / "big.txt", lines=6000)
    env = cli_env()
    fake_server.on("MapResult", map_responder)
    fake_server.on("AnswerResult", lambda req, text: {"answer": "Cited.", "cites": [1]})
    fake_server.fault("L003500 ", "500")
    args = ["ask", "big.txt", QUESTION, "--strategy", "fanout", "--base-url", fake_server.url,
            "--model", "fake", "--json"]
    first = subprocess.run([sys.executable, "-m", "rlm.cli", *args], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=120)
    assert first.returncode == 3, first.stderr
    rep = json.loads(first.stdout)
    total = rep["coverage"]["chunks_total"]
    fake_server.clear_faults()
    n0 = len(fake_server.requests)
    p = rlm("resume", rep["run_id"], "--json", env=env)  # from another folder: absolute path
    assert p.returncode == 0, p.stderr
    rep2 = json.loads(p.stdout)
    assert len(map_requests(fake_server, n0)) == 1  # only the failed chunk calls the model
    assert rep2["usage"]["cached_calls"] >= total - 1
    assert rep["corpus"]["path"] == "big.txt" and rep2["corpus"]["path"] == str(tmp_path / "big.txt")
