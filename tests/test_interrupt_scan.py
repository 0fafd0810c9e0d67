"""Ctrl-C during the code scan of a big corpus takes effect at once, and still reports."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from rlm.corpus.profile import profile_log
from rlm.corpus.source import TextSource
from rlm.engine.interrupt import ScanInterrupted, controlled
from rlm.store import RunStore

LINE = "2026-03-14T09:{m:02d}:{s:02d}.{ms:03d}Z INFO worker-{w} served request {i} in {d} ms\n"


def _block(n: int = 14_000) -> bytes:
    return "".join(LINE.format(m=i // 60 % 60, s=i % 60, ms=i % 1000, w=i % 17, i=i, d=i % 97)
                   for i in range(n)).encode()


def test_ctrl_c_while_reading_a_big_corpus_reports_json_and_is_interrupted(tmp_path):
    """`rlm ask -` reads a log from a pipe that the test feeds: 60 MB have been taken in (the
    read is under way, however fast the machine) when Ctrl-C arrives; the pipe never ends."""
    env = dict(os.environ, RLM_MODEL="none")
    proc = subprocess.Popen([sys.executable, "-m", "rlm.cli", "ask", "-", "anomalies?", "--json"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env)
    data = _block()
    fed = 0
    while fed < 60 << 20:
        proc.stdin.write(data)  # blocks until the run takes it: the read is under way
        fed += len(data)
    proc.stdin.flush()
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=30)  # the pipe stays open: only Ctrl-C can end this run
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError("Ctrl-C did not stop the read") from None
    waited = time.monotonic() - t0
    out, err = proc.stdout.read().decode(), proc.stderr.read().decode()
    proc.stdin.close()
    assert "Traceback" not in err, err
    assert proc.returncode == 3, (proc.returncode, err)
    rep = json.loads(out)
    assert rep["run_id"] and rep["coverage"]["complete"] is False
    st = rep["coverage"]["statement"]
    assert "interrupted by Ctrl-C" in st and "stopped after" in st
    assert 0 < rep["coverage"]["bytes_scanned_by_code"] <= fed  # what was done, and no more
    assert waited < 10, f"Ctrl-C took {waited:.1f} s to take effect"
    [run] = RunStore().list(1)
    assert run["id"] == rep["run_id"] and run["status"] == "interrupted"
    r = subprocess.run([sys.executable, "-m", "rlm.cli", "runs"], capture_output=True, text=True,
                       env=env, timeout=60)
    assert "interrupted" in r.stdout and "CancelledError" not in r.stdout


@pytest.mark.parametrize("mb", [20, 120])  # one process, and one worker process per core
def test_the_profile_scan_stops_at_the_flag(tmp_path, mb):
    p = tmp_path / "big.log"
    data = _block()
    with open(p, "wb") as fh:
        for _ in range(mb * (1 << 20) // len(data)):
            fh.write(data)
    src = TextSource(p)
    seen = []

    async def scan():
        with controlled(handle_sigint=False, on_progress=lambda w, d, t: seen.append(d)) as ctl:
            threading.Timer(0.05, ctl.stop.set).start()  # Ctrl-C, from another thread
            t0 = time.monotonic()
            with pytest.raises(ScanInterrupted):
                profile_log(src)
            return time.monotonic() - t0

    import anyio

    took = anyio.run(scan)
    src.close()
    assert took < 5
    assert all(d < p.stat().st_size for d in seen)
