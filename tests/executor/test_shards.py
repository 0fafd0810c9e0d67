"""The shard plan and the shard scan on the local executor (no Ray needed): shards start at line
starts, the plan does not depend on the machine, a scan cut into many shards gives the same
template table as one cut into few, and the shard store only loads scan tables."""

from __future__ import annotations

import os
import pickle
import signal
import threading
import time

import pytest

from rlm.corpus.profile import profile_log
from rlm.corpus.source import TextSource
from rlm.corpus.template_scan import scan_templates
from rlm.executor import LocalExecutor, using
from rlm.executor.scan import count_newlines
from rlm.executor.shard_store import ShardStore
from rlm.executor.shards import plan_ranges, plan_shards
from rlm.fixtures.log import write_log


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    p = tmp_path_factory.mktemp("shards") / "app.log"
    write_log(p, lines=40_000)
    return p


def test_shards_start_at_line_starts_and_cover_the_file(log):
    data = log.read_bytes()
    shards = plan_shards([str(log)], shard_bytes=300_000, split_min=0)
    assert len(shards) == -(-len(data) // 300_000)
    assert shards[0].start == 0 and shards[-1].end == len(data)
    for a, b in zip(shards, shards[1:]):
        assert a.end == b.start and data[b.start - 1:b.start] == b"\n"
    assert sum(count_newlines(str(log), s.start, s.end) for s in shards) == data.count(b"\n")


def test_a_windows_ranges_are_cut_where_the_file_is_cut(log, monkeypatch):
    monkeypatch.setenv("RLM_SHARD_MB", "0.3")
    data = log.read_bytes()
    starts = [0] + [i + 1 for i, b in enumerate(data) if b == 10][:-1]  # each line's offset
    cuts = {s.start for s in plan_shards([str(log)])}
    ranges = [(0, str(log), starts[99], starts[20_000]), (0, str(log), starts[30_000], len(data))]
    got = plan_ranges(ranges, lambda _fi, off: starts.index(off))
    assert [k for k, _ in got] == sorted(k for k, _ in got) and {k for k, _ in got} == {0, 1}
    for k, s in got:
        _, _, a, b = ranges[k]
        assert a <= s.start < s.end <= b and (s.start == a or s.start in cuts)
        assert s.line0 == starts.index(s.start)  # the lines before it, known to the plan
    assert sum(s.bytes for _, s in got) == (starts[20_000] - starts[99]) + (len(data) - starts[30_000])
    assert len(got) > 2


def test_many_shards_give_the_same_table_as_one(log, monkeypatch):
    one = scan_templates([str(log)]).table
    monkeypatch.setenv("RLM_SHARD_MB", "0.3")
    many = scan_templates([str(log)])
    assert many.shards > 5 and not many.failed
    assert many.table.counts == one.counts  # counts and first line numbers of every shape
    assert many.table.lines == one.lines == 40_000


def test_profile_is_the_same_on_one_worker_and_on_a_pool(log, monkeypatch):
    monkeypatch.setenv("RLM_SHARD_MB", "0.5")
    with TextSource(log) as src:
        with using(LocalExecutor(workers=1)):
            a = profile_log(src)
        with using(LocalExecutor(workers=2)) as ex:
            b = profile_log(src)
    assert (a.candidates, a.templates_total, a.rules_by_line) == (b.candidates, b.templates_total,
                                                                   b.rules_by_line)
    assert b.shards == a.shards > 1 and ex.info().shards_per_node == {"local": b.shards}


def test_shard_store_loads_scan_tables_only(tmp_path, log):
    from rlm.corpus.counter import TemplateCounter

    store = ShardStore(TemplateCounter, tmp_path)
    table = scan_templates([str(log)]).table
    store.put("k", table)
    assert store.get("k").counts == table.counts
    (tmp_path / "evil.pkl").write_bytes(pickle.dumps(print))  # a callable, not a table
    assert store.get("evil") is None
    assert store.get("missing") is None


def test_grep_shards_match_the_one_process_search(log, monkeypatch):
    """The shard function and the driver's walk give what the mmap search gives, truncation
    included (run here on the local executor's functions; on Ray in test_executor_ray)."""
    from rlm.corpus import grep as grep_mod
    from rlm.corpus.grep_scan import grep_shards

    monkeypatch.setenv("RLM_SHARD_MB", "0.3")
    with TextSource(log) as src:
        for anchors, cap in ((["panic", "override"], 5000), (["INFO"], 7)):
            want = grep_mod.search(src, anchors, max_hits=cap)
            assert want.hit_lines
            pattern = b"|".join(grep_mod.re.escape(a.encode()) for a in anchors)
            hits, failed = grep_shards(str(log), pattern, cap)
            offsets = [at for at, _ in hits]
            assert not failed and offsets == sorted(offsets)
            lines = sorted({src.line_of_offset(at) for at in offsets})
            assert lines[:len(want.hit_lines)] == want.hit_lines
            assert want.truncated == (len(lines) > cap)


def _pool_workers() -> list[int]:
    """Pids of this process's pool workers: children of its forkserver (a child of this one)."""
    def ppid(pid: str) -> int:
        with open(f"/proc/{pid}/stat") as fh:
            return int(fh.read().rsplit(")", 1)[1].split()[1])

    procs = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                procs[int(d)] = ppid(d)
            except (OSError, ValueError, IndexError):
                pass
    servers = {p for p, parent in procs.items() if parent == os.getpid()}
    return [p for p, parent in procs.items() if parent in servers]


def test_a_local_worker_that_dies_is_run_once_more(log, monkeypatch):
    """Ray runs a task once more when its worker dies; the local executor does the same: the
    pool breaks, and the shards it took down run again in a new pool."""
    monkeypatch.setenv("RLM_SHARD_MB", "0.3")
    with TextSource(log) as src:
        with using(LocalExecutor(1)):
            want = profile_log(src)  # one process: no pool to break
        killed: list[int] = []
        stop = threading.Event()

        def kill_one() -> None:
            while not stop.is_set() and not killed:
                for pid in _pool_workers():
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
                    break
                time.sleep(0.002)

        t = threading.Thread(target=kill_one, daemon=True)
        t.start()
        with using(LocalExecutor(2)):
            got = profile_log(src)
        stop.set()
    assert killed, "no worker was seen to kill"
    assert not got.failed_shards and got.shards == want.shards > 2
    assert (got.candidates, got.rules_by_line, got.lines) == (want.candidates,
                                                             want.rules_by_line, want.lines)


def test_a_pool_that_breaks_while_its_shards_are_handed_out_runs_them_again(log, monkeypatch):
    """A worker can die before every shard is handed to the pool: submit then raises (the
    pool is broken). Those shards are the dead worker's too, and run again in a new pool
    (under load, the test above sometimes killed its worker that early)."""
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    monkeypatch.setenv("RLM_SHARD_MB", "0.3")
    real, calls = ProcessPoolExecutor.submit, []

    def submit(self, *a, **k):
        calls.append(1)
        if len(calls) == 2:  # the first pool breaks at its second shard
            raise BrokenProcessPool("a child process terminated abruptly")
        return real(self, *a, **k)

    with TextSource(log) as src:
        with using(LocalExecutor(1)):
            want = profile_log(src)
        monkeypatch.setattr(ProcessPoolExecutor, "submit", submit)
        with using(LocalExecutor(2)):
            got = profile_log(src)
    assert len(calls) > want.shards  # the broken shard was handed out again
    assert not got.failed_shards and got.shards == want.shards > 2
    assert (got.candidates, got.rules_by_line, got.lines) == (want.candidates,
                                                             want.rules_by_line, want.lines)
