"""A corpus scan over shards on the run's executor, merged by key on the driver.

A scan is three things (the table's own module supplies them, so any table plugs in):
- ``count(path, start, end, threads, *args)``: a module-level function that scans one shard
  into a partial table (it runs in a worker process or a Ray task);
- ``merge(table, part, shard)``: fold a partial table into the run's table, in shard order
  (merge by key: counts add up, first-seen lines keep file order);
- ``skip(table, shard, lines)``: a shard that failed still holds `lines` lines, counted here
  on the driver, so the line numbers of every later shard stay the file's.

Shards come from one plan (rlm.executor.shards), whatever the executor, so a local and a Ray
run merge the same partial tables in the same order: equal tables, line for line.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

from rlm.corpus import beneath
from rlm.executor import current
from rlm.executor.base import ShardResult
from rlm.executor.shard_store import ShardStore, shard_key
from rlm.executor.shards import Shard, plan_shards
from rlm.engine.interrupt import ScanInterrupted

READ = 1 << 20


@dataclass
class FailedShard:
    """A shard no worker could scan: where it is (bytes and lines) and why."""

    shard: Shard
    reason: str
    line_start: int  # 1-based, in the file (a folder: in that file)
    line_end: int

    @property
    def lines(self) -> int:
        return max(0, self.line_end - self.line_start + 1)


@dataclass
class ScanResult:
    table: Any
    shards: int = 0
    failed: list[FailedShard] = field(default_factory=list)
    reused: int = 0  # shards whose tables an unfinished earlier scan kept (rlm.executor.shard_store)
    shard_s: list[float] = field(default_factory=list)  # each scanned shard's own time
    merge_s: float = 0.0  # the driver's time merging the partial tables

    @property
    def failed_bytes(self) -> int:
        return sum(f.shard.bytes for f in self.failed)

    @property
    def failed_lines(self) -> int:
        return sum(f.lines for f in self.failed)


def _confined(path: str, start: int, end: int, threads: int, scope, count: Callable,
              *args) -> Any:
    """A shard function run beneath the driver's roots (rlm.corpus.beneath), wherever it runs;
    `scope`: (roots, rlm's own spool files, which are opened as they are)."""
    roots, mine = scope
    for p in mine:
        beneath.own(p)
    with beneath.confined(roots):
        return count(path, start, end, threads, *args)


def count_newlines(path: str, start: int, end: int) -> int:
    """Lines in bytes [start, end) of a file: its newlines, plus an unterminated last line."""
    n, last = 0, b"\n"
    with beneath.open_file(path) as fh:
        fh.seek(start)
        left = end - start
        while left > 0:
            data = fh.read(min(READ, left))
            if not data:
                break
            n += data.count(b"\n")
            last = data[-1:]
            left -= len(data)
    return n + (0 if last == b"\n" else 1)


def scan_shards(paths: list[str], count: Callable, args: tuple, table: Any,
                merge: Callable[[Any, Any, Shard], None],
                skip: Callable[[Any, Shard, int], None], part_type: type | None = None,
                keep: bool = True, light: bool = False) -> ScanResult:
    """Plan the shards of `paths`, scan them on the current executor (those a scan that did
    not finish kept are taken from the shard store), merge them in order. `part_type`: the
    class of a partial table (default: the table's own). `keep=False`: no shard store (a
    scan whose arguments change every run, such as a deadline, would only fill it).
    `light`: a scan at C speed (a regex prefilter), for which starting worker processes costs
    more than it saves: the local executor runs its shards in this process, one after another
    (Ray still spreads them over the cluster)."""
    return scan_planned(plan_shards(paths), count, args, table, merge, skip, part_type, keep,
                        light)


def scan_planned(shards: list[Shard], count: Callable, args: tuple, table: Any,
                 merge: Callable[[Any, Any, Shard], None],
                 skip: Callable[[Any, Shard, int], None], part_type: type | None = None,
                 keep: bool = True, light: bool = False) -> ScanResult:
    """`scan_shards` over shards planned by the caller (rlm.executor.shards.plan_ranges: a
    time window's pieces, whose first line numbers the plan knows)."""
    out = ScanResult(table, len(shards))
    if not shards:
        return out
    store = ShardStore(part_type or type(table))  # partial tables of this type, nothing else
    keys = {s.index: shard_key(count, s, args) for s in shards} if keep else {}
    kept = {s.index: v for s in shards if keep and (v := store.get(keys[s.index])) is not None}
    todo = [s for s in shards if s.index not in kept]
    # a worker opens beneath the same roots as the driver (MCP), and reads its spool files
    scope = (beneath.current(), beneath.owned())
    try:
        label = f"{count.__module__.rsplit('.', 1)[-1]}.{count.__name__}"  # for the report
        ran = ({r.shard.index: r for r in current().run_shards(
            _confined, todo, (scope, count) + args, label=label, light=light)} if todo else {})
    except (ScanInterrupted, KeyboardInterrupt) as e:  # Ctrl-C: keep what finished, for resume
        for r in getattr(e, "finished", []) if keep else []:
            store.put(keys[r.shard.index], r.value)
        raise
    out.reused = len(kept)
    first_line: dict[int, int] = {}  # file index -> lines of that file merged so far
    for s in shards:
        before = first_line.get(s.file, 0) if s.line0 is None else s.line0
        r = ran.get(s.index) or ShardResult(s, kept[s.index], node="shard store")
        if r.ok:
            t = time.perf_counter()
            merge(table, r.value, s)
            out.merge_s += time.perf_counter() - t
            if s.index in ran:
                out.shard_s.append(r.seconds)
            first_line[s.file] = before + _lines_of(r.value)
            continue
        n = count_newlines(s.path, s.start, s.end)
        skip(table, s, n)
        first_line[s.file] = before + n
        out.failed.append(FailedShard(s, r.error or "failed", before + 1, before + n))
    if keep:
        _keep_for_resume(store, keys, ran, kept, whole=not out.failed)
    return out


def _keep_for_resume(store: ShardStore, keys: dict[int, str], ran: dict[int, ShardResult],
                     kept: dict[int, Any], whole: bool) -> None:
    """A scan with a failed shard keeps what it scanned; a whole one drops what it reused."""
    if whole:
        for i in kept:
            store.drop(keys[i])
        return
    for i, r in ran.items():
        if r.ok:
            store.put(keys[i], r.value)


def _lines_of(part: Any) -> int:
    return int(getattr(part, "lines", 0))
