"""Two Ray nodes on this machine (a head and a second node started with `ray start`, one CPU
each): a run spreads its shards over both and the report counts them per node; a corpus one node
cannot see is a one-line usage error naming that node, before any work. The second node runs in
its own mount namespace with an empty tmpfs over one folder, so that folder's files exist on the
head only: the per-node path check meets a node that really cannot read the path."""

from __future__ import annotations

import json
import re
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import pytest

pytest.importorskip("ray", reason="the ray extra is not installed: pip install 'rlm[ray]'")

from rlm.api import AskOptions, ask_async  # noqa: E402
from rlm.fixtures.log import write_log  # noqa: E402

# the `ray` command through this interpreter: a venv whose packages come from elsewhere (or a
# wheel install without scripts on PATH) has no `ray` script beside python
RAY = [sys.executable, "-m", "ray.scripts.scripts"]
# loopback only, and the same on the nodes and the driver: Ray's token auth stays out of the way
ENV = dict(os.environ, RAY_AUTH_MODE="disabled", RAY_USAGE_STATS_ENABLED="0")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _can_unshare() -> bool:
    return shutil.which("unshare") is not None and subprocess.run(
        ["unshare", "-m", "--propagation", "private", "true"], capture_output=True).returncode == 0


def _kill_session(sid: int) -> None:
    """Every process of the session a `ray start` began (its daemons inherit it), by pid."""
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if os.getsid(int(d)) == sid:
                    os.kill(int(d), signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def _wait(check, what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what}: not up after {timeout:g} s")
        time.sleep(0.25)


def _port_open(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), 1).close()
        return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def two_nodes(tmp_path_factory):
    if not _can_unshare():
        pytest.skip("needs `unshare -m` (a mount namespace) to hide a folder from one node")
    hidden = tmp_path_factory.mktemp("head-only")
    port = _free_port()
    addr = f"127.0.0.1:{port}"
    # its own temp dir: `ray start --head` writes the address a bare ray.init() joins there,
    # and /tmp/ray is shared with every other Ray user of this machine
    temp = tempfile.mkdtemp(prefix="rlmray-", dir="/tmp")  # short: Ray's socket paths
    common = ["--num-cpus=1", "--block", "--disable-usage-stats", f"--temp-dir={temp}"]
    procs = [subprocess.Popen([*RAY, "start", "--head", f"--port={port}",
                               "--include-dashboard=false"] + common, env=ENV,
                              start_new_session=True, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)]
    try:
        _wait(lambda: _port_open(port), "the Ray head")
        procs.append(subprocess.Popen(
            ["unshare", "-m", "--propagation", "private", "sh", "-c",
             f"mount -t tmpfs none {hidden} && exec {shlex.join(RAY)} start --address={addr} "
             + " ".join(common)], env=ENV, start_new_session=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        _wait(lambda: _alive_nodes(addr) == 2, "the second Ray node")
        yield addr, hidden
    finally:
        for p in procs:
            _kill_session(p.pid)
            p.wait(timeout=30)
        shutil.rmtree(temp, ignore_errors=True)


def _alive_nodes(addr: str) -> int:
    out = subprocess.run([sys.executable, "-c", (
        "import ray; ray.init(address=%r, logging_level='ERROR', log_to_driver=False); "
        "print(sum(1 for n in ray.nodes() if n['Alive']))") % addr],
        capture_output=True, text=True, env=ENV, timeout=120)
    return int(out.stdout.strip() or 0) if out.returncode == 0 else 0


def _rlm(*args, **env):
    return subprocess.run([sys.executable, "-m", "rlm.cli", *args], capture_output=True,
                          text=True, env=dict(ENV, **env), timeout=300)


def test_shards_spread_over_two_nodes_and_the_answer_is_the_local_one(two_nodes, tmp_path,
                                                                      monkeypatch):
    addr, _ = two_nodes
    log = tmp_path / "app.log"
    write_log(log, lines=60_000, seed=5)  # ~5 MB: 5 shards of 1 MB
    out = _rlm("ask", str(log), "anomalies?", "--json", "--executor", "ray",
               "--ray-address", addr, RLM_SHARD_MB="1")
    assert out.returncode == 0, out.stderr
    rep = json.loads(out.stdout)
    ex = rep["executor"]
    assert ex["nodes"] == 2 and ex["workers"] == 2 and not ex["started_local"]
    assert len(ex["shards_per_node"]) == 2 and all(ex["shards_per_node"].values())
    assert sum(ex["shards_per_node"].values()) == ex["tasks"]["template_scan.count_shard"] == 5
    monkeypatch.setenv("RLM_SHARD_MB", "1")
    local = anyio.run(lambda: ask_async(str(log), "anomalies?",
                                        AskOptions(model="none", executor="local")))
    assert [(f["source"]["line_start"], f["claim"]) for f in rep["findings"]] == \
        [(f.source.line_start, f.claim) for f in local.findings]
    assert rep["coverage"]["statement"] == local.coverage.statement


def test_a_corpus_one_node_cannot_see_is_a_usage_error_naming_it(two_nodes):
    addr, hidden = two_nodes
    log = Path(hidden) / "only-here.log"
    write_log(log, lines=2_000)
    assert log.exists()  # here (the head's view); the second node sees an empty folder
    t0 = time.monotonic()
    out = _rlm("ask", str(log), "anomalies?", "--executor", "ray", "--ray-address", addr)
    assert out.returncode == 2
    err = [ln for ln in out.stderr.splitlines() if ln.strip()]
    assert len(err) == 1 and "Traceback" not in out.stderr
    assert re.search(r"Ray node \S+/[0-9a-f]{8} cannot read .*only-here\.log: No such file",
                     err[0]), err[0]
    assert time.monotonic() - t0 < 120
