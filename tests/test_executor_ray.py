"""The Ray executor on a real local Ray cluster (started once for this module, 2 CPUs, on
127.0.0.1; CLI runs join it by its address): the same corpus gives the same report on both
executors; a worker killed mid-scan is retried; a shard that still fails is named and the run
exits 3, and `rlm resume` finishes it; a fan-out under --max-calls N makes at most N requests."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import anyio
import pytest

ray = pytest.importorskip("ray", reason="the ray extra is not installed: pip install 'rlm[ray]'")

from rlm.api import AskOptions, ask_async  # noqa: E402
from rlm.corpus.profile import profile_log  # noqa: E402
from rlm.corpus.source import TextSource  # noqa: E402
from rlm.errors import UsageError  # noqa: E402
from rlm.executor import LocalExecutor, using  # noqa: E402
from rlm.executor.ray_cluster import RayExecutor  # noqa: E402
from rlm.fixtures.log import write_log  # noqa: E402

SHARD_TITLE = b"ray::_run_shard"


@pytest.fixture(scope="module")
def cluster():
    ctx = ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
                   logging_level="ERROR")
    try:
        yield ctx.address_info["gcs_address"]
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def big_log(tmp_path_factory):
    p = tmp_path_factory.mktemp("raylog") / "app.log"
    key = write_log(p, lines=120_000)  # ~10 MB: 5 shards of 2 MB
    return p, key


def _ask(path, executor, **kw):
    opts = AskOptions(model="none", executor=executor, **kw)
    return anyio.run(lambda: ask_async(str(path), "anomalies?", opts))


def _same_answer(a, b) -> None:
    assert [(f.source.path, f.source.line_start, f.claim) for f in a.findings] == \
        [(f.source.path, f.source.line_start, f.claim) for f in b.findings]
    assert a.coverage.statement == b.coverage.statement
    assert a.groups == b.groups


def test_same_corpus_same_report_on_both_executors(cluster, big_log, monkeypatch):
    path, key = big_log
    monkeypatch.setenv("RLM_SHARD_MB", "2")
    local, remote = _ask(path, "local"), _ask(path, "ray")
    _same_answer(local, remote)
    assert local.coverage.complete and remote.coverage.complete
    assert sorted({f.source.line_start for f in remote.findings} & {n["line"] for n in
                                                                     key["needles"]})
    assert remote.executor["name"] == "ray" and remote.executor["nodes"] == 1
    assert sum(remote.executor["shards_per_node"].values()) == 5
    assert local.executor["name"] == "local"


def test_grep_on_ray_gives_the_same_hits(cluster, big_log, monkeypatch):
    import re

    path, key = big_log
    monkeypatch.setenv("RLM_SHARD_MB", "2")
    sess = next(m.group(0) for n in key["needles"] if (m := re.search(r"S-[A-Z0-9]{6}", n["text"])))
    q = f"what happened to {sess}?"
    local = anyio.run(lambda: ask_async(str(path), q, AskOptions(model="none", executor="local")))
    remote = anyio.run(lambda: ask_async(str(path), q, AskOptions(model="none", executor="ray")))
    assert remote.strategy == "grep" and len(remote.findings) >= 2
    _same_answer(local, remote)
    assert sum(remote.executor["shards_per_node"].values()) == 5


def test_same_template_tables_for_a_folder(cluster, tmp_path, monkeypatch):
    monkeypatch.setenv("RLM_SHARD_MB", "0.5")
    d = tmp_path / "logs"
    d.mkdir()
    write_log(d / "a.log", lines=15_000, seed=3)
    write_log(d / "b.log", lines=9_000, seed=4)
    for key in d.glob("*.truth.json"):  # the answer keys are not logs
        key.unlink()
    local, remote = _ask(d, "local"), _ask(d, "ray")
    _same_answer(local, remote)
    assert remote.strategy == "profile" and remote.coverage.complete
    assert sum(remote.executor["shards_per_node"].values()) >= 4


def _shard_workers() -> list[int]:
    """Pids of the Ray workers running a shard right now (Ray titles them by the task)."""
    pids = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/cmdline", "rb") as fh:
                    if fh.read().startswith(SHARD_TITLE):
                        pids.append(int(d))
            except OSError:
                pass
    return pids


class Killer(threading.Thread):
    """Kills (SIGKILL) the first `times` distinct workers seen running a shard."""

    def __init__(self, times: int):
        super().__init__(daemon=True)
        self.times, self.killed, self.stop = times, [], threading.Event()

    def run(self) -> None:
        while not self.stop.is_set() and len(self.killed) < self.times:
            for pid in _shard_workers():
                if pid not in self.killed:
                    os.kill(pid, signal.SIGKILL)
                    self.killed.append(pid)
                    break
            time.sleep(0.002)


def test_a_worker_killed_mid_scan_is_retried(cluster, big_log, monkeypatch):
    path, _ = big_log
    monkeypatch.setenv("RLM_SHARD_MB", "2")
    with TextSource(path) as src:
        with using(LocalExecutor()):
            want = profile_log(src)
        killer = Killer(times=1)
        killer.start()
        with using(RayExecutor(workers=1)):
            got = profile_log(src)
        killer.stop.set()
    assert len(killer.killed) == 1
    assert not got.failed_shards
    assert (got.candidates, got.rules_by_line, got.lines) == (want.candidates,
                                                             want.rules_by_line, want.lines)


def test_a_shard_that_still_fails_is_named_and_resume_finishes_it(cluster, big_log,
                                                                 monkeypatch, tmp_path):
    path, _ = big_log
    monkeypatch.setenv("RLM_SHARD_MB", "2")
    monkeypatch.setenv("RLM_RAY_WORKERS", "1")  # one shard at a time: the 2nd kill is the retry
    killer = Killer(times=2)
    killer.start()
    rep = _ask(path, "ray")
    killer.stop.set()
    assert len(killer.killed) == 2
    failed = rep.coverage.chunks_failed
    assert [c.chunk for c in failed] == ["shard-1"] and not rep.coverage.complete
    assert failed[0].line_start == 1 and failed[0].line_end > 10_000
    assert "its Ray worker died, twice (retried once)" in failed[0].reason
    assert f"shard-1 {path}:1-{failed[0].line_end}" in rep.coverage.statement
    # `rlm resume` (here on the local executor): only shard-1 is scanned again
    env = dict(os.environ)
    out = subprocess.run([sys.executable, "-m", "rlm.cli", "resume", rep.run_id, "--json",
                          "--executor", "local"], capture_output=True, text=True, env=env,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    done = json.loads(out.stdout)
    assert done["coverage"]["complete"]
    assert "4 of 5 shards were taken from the tables" in done["coverage"]["statement"]
    full = _ask(path, "local")
    assert [f["source"]["line_start"] for f in done["findings"]] == \
        [f.source.line_start for f in full.findings]


def test_fan_out_on_ray_never_passes_the_call_cap(cluster, tmp_path, fake_server):
    p = tmp_path / "prose.txt"
    p.write_text("".join(f"Line {i} of ordinary prose about the weather and lunch plans.\n"
                         for i in range(1, 3001)))
    fake_server.fault("Line", "slow", seconds=0.2)
    opts = AskOptions(model="fake", base_url=fake_server.url, executor="ray", max_calls=3,
                      concurrency=4, strategy="fanout")
    rep = anyio.run(lambda: ask_async(str(p), "what is said?", opts))
    assert rep.coverage.chunks_total > 3
    assert 1 <= len(fake_server.requests) <= 3
    assert rep.usage.calls == len(fake_server.requests)
    assert not rep.coverage.complete and "call budget of 3 spent" in rep.coverage.statement


def test_cli_joins_the_cluster_and_says_where_work_ran(cluster, big_log, monkeypatch):
    path, _ = big_log
    env = dict(os.environ, RLM_SHARD_MB="2")
    out = subprocess.run([sys.executable, "-m", "rlm.cli", "ask", str(path), "anomalies?",
                          "--json", "--executor", "ray", "--ray-address", cluster],
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    rep = json.loads(out.stdout)
    assert rep["executor"]["name"] == "ray" and rep["executor"]["started_local"] is False
    assert sum(rep["executor"]["shards_per_node"].values()) == 5


def test_a_path_a_node_cannot_read_is_a_usage_error(cluster, tmp_path):
    ex = RayExecutor()
    with pytest.raises(UsageError, match=r"Ray node .* cannot read .*missing\.log"):
        ex.check_path(str(tmp_path / "missing.log"))


def test_ctrl_c_cancels_the_ray_tasks_and_keeps_what_finished(cluster, big_log, monkeypatch):
    from rlm.engine.interrupt import ScanInterrupted, controlled

    path, _ = big_log
    monkeypatch.setenv("RLM_SHARD_MB", "2")
    with TextSource(path) as src, using(LocalExecutor()):
        want = profile_log(src)

    async def scan():
        stop = threading.Event()
        # Ctrl-C as soon as the first shard is done (the scan reports the bytes done)
        with controlled(handle_sigint=False, on_progress=lambda w, d, t: d and stop.set()) as ctl:
            threading.Thread(target=lambda: (stop.wait(), ctl.stop.set()), daemon=True).start()
            with TextSource(path) as src, using(RayExecutor(workers=1)):
                t0 = time.monotonic()
                with pytest.raises(ScanInterrupted):
                    profile_log(src)
                return time.monotonic() - t0

    took = anyio.run(scan)
    assert took < 30
    deadline = time.monotonic() + 10
    while _shard_workers() and time.monotonic() < deadline:  # cancelled: no shard runs on
        time.sleep(0.05)
    assert not _shard_workers()
    with TextSource(path) as src, using(RayExecutor()):  # resumed: what finished is kept
        again = profile_log(src)
    assert 1 <= again.reused_shards < again.shards == 5
    assert (again.candidates, again.rules_by_line) == (want.candidates, want.rules_by_line)


def test_fan_out_on_ray_gives_the_local_answer_and_shares_the_call_cache(cluster, tmp_path,
                                                                        fake_server):
    import re

    num = re.compile(r"^(\d+)\| (.*)$", re.M)
    p = tmp_path / "prose.txt"
    lines = [f"Paragraph {i} talks about routine matters and nothing else at all."
             for i in range(3000)]
    lines[1234] = "The committee approved the PLANNED change to the schedule."
    p.write_text("\n".join(lines) + "\n")
    fake_server.on("MapResult", lambda r, t: {"findings": [
        {"line": int(m.group(1)), "claim": "the committee approved a change", "quote": "PLANNED"}
        for m in num.finditer(t) if "PLANNED" in m.group(2)]})
    fake_server.on("AnswerResult", lambda r, t: {"answer": "The committee approved a change.",
                                                 "cites": [1]})

    replicas = f"{fake_server.url},{fake_server.url}/"  # two endpoints (one server): a pool

    def ask(executor, no_cache=True):
        opts = AskOptions(model="m", base_url=replicas, executor=executor,
                          strategy="fanout", concurrency=2, no_cache=no_cache)
        return anyio.run(lambda: ask_async(str(p), "what did the committee do?", opts))

    local = ask("local")
    sent = len(fake_server.requests)
    remote = ask("ray")
    assert len(fake_server.requests) - sent == sent  # the same calls, sent from Ray workers
    assert [(f.source.line_start, f.claim, f.verified) for f in remote.findings] == \
        [(f.source.line_start, f.claim, f.verified) for f in local.findings] != []
    assert remote.coverage.statement == local.coverage.statement and remote.coverage.complete
    assert remote.answer == local.answer
    # the workers' per-endpoint usage comes back to the driver's report
    assert sum(e["calls"] for e in remote.usage.endpoints) == sent == \
        sum(e["calls"] for e in local.usage.endpoints)
    assert len(remote.usage.endpoints) == 2
    cached = ask("ray", no_cache=False)  # the driver's call cache answers every call
    assert len(fake_server.requests) == 2 * sent
    assert cached.usage.calls == 0 and cached.usage.cached_calls == remote.usage.calls
