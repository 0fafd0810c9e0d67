"""Ctrl-C during the code scan of a big file takes effect at once, and still reports."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from rlm.store import RunStore


def _big_log(path, mb: int = 200) -> int:
    """~mb MB of log lines (a 1 MiB block written again and again: seconds, not minutes)."""
    block = "".join(f"2026-03-14T09:{i // 60 % 60:02d}:{i % 60:02d}.{i % 1000:03d}Z INFO "
                    f"worker-{i % 17} served request {i} in {i % 97} ms\n" for i in range(14_000))
    data = block.encode()
    with open(path, "wb") as fh:
        for _ in range(mb * (1 << 20) // len(data)):
            fh.write(data)
    return os.path.getsize(path)


def test_ctrl_c_during_the_profile_scan_reports_and_is_interrupted(tmp_path):
    p = tmp_path / "big.log"
    size = _big_log(p)
    env = dict(os.environ, RLM_MODEL="none")
    proc = subprocess.Popen([sys.executable, "-m", "rlm.cli", "ask", str(p), "anomalies?",
                             "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    deadline = time.time() + 60
    while time.time() < deadline and proc.poll() is None:  # the run is recorded: scan under way
        try:
            if RunStore().list(1):
                break
        except Exception:  # noqa: BLE001 - the store is being created
            pass
        time.sleep(0.05)
    time.sleep(0.5)
    assert proc.poll() is None, "the scan ended before the test could interrupt it"
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    waited = time.monotonic() - t0
    assert "Traceback" not in err, err
    assert proc.returncode == 3, (proc.returncode, err)
    rep = json.loads(out)
    assert rep["run_id"] and rep["coverage"]["complete"] is False
    assert "interrupted" in rep["coverage"]["statement"]
    assert 0 < rep["coverage"]["bytes_scanned_by_code"] < size  # what was done, and no more
    assert waited < 5, f"Ctrl-C took {waited:.1f} s to take effect"
    [run] = RunStore().list(1)
    assert run["id"] == rep["run_id"] and run["status"] == "interrupted"
    r = subprocess.run([sys.executable, "-m", "rlm.cli", "runs"], capture_output=True, text=True,
                       env=env, timeout=60)
    assert "interrupted" in r.stdout and "CancelledError" not in r.stdout
