"""The local executor (the default): shards in this process, or one worker process per core.

One shard runs here, with two mask threads. Several run in worker processes (forkserver), at
most one per core and MAX_WORKERS in all: the mask and the counting hold the GIL too often for
threads to scale. A worker that dies breaks its pool: the shards it took down with it run once
more in a new pool (as Ray runs a task once more); a shard that fails again is named by the
caller. Ctrl-C stops the workers at once and raises ScanInterrupted.
"""

from __future__ import annotations

import multiprocessing
import os
from collections import Counter
from concurrent.futures import Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Sequence

from rlm.executor.base import ExecutorInfo, ShardFn, ShardResult, timed
from rlm.executor.shards import Shard
from rlm.engine.interrupt import ScanInterrupted, checkpoint

MAX_WORKERS = 4
DIED = "its worker process died"
DIED_TWICE = "its worker process died, twice (retried once)"


def _worker_init() -> None:
    """In our own worker processes only: keep freed numpy temporaries in the heap instead of
    returning them to the OS, so the next block does not page-fault fresh memory (~2x on the
    mask). glibc only; elsewhere a no-op."""
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 64 << 20)  # M_MMAP_THRESHOLD
        libc.mallopt(-1, 128 << 20)  # M_TRIM_THRESHOLD
    except (OSError, AttributeError):
        pass


class LocalExecutor:
    name = "local"

    def __init__(self, workers: int | None = None):
        self.workers = workers or min(os.cpu_count() or 1, MAX_WORKERS)
        self.shards_done = 0
        self.tasks: Counter[str] = Counter()

    def run_shards(self, fn: ShardFn, shards: Sequence[Shard], args: tuple = (),
                   label: str = "scan", light: bool = False) -> list[ShardResult]:
        self.tasks[label] += len(shards)
        if len(shards) == 1 or self.workers == 1 or light:
            out = []
            for s in shards:  # threads=2: the mask overlaps the counting in this process
                value, secs = timed(fn, s.path, s.start, s.end, 2, *args)
                out.append(ShardResult(s, value, seconds=secs))
            self.shards_done += len(out)
            return out
        out = self._pool(fn, shards, args)
        again = [r.shard for r in out if r.error == DIED]
        if again:  # a worker died, and the pool with it: those shards once more, in a new pool
            try:
                redo = {r.shard.index: r for r in self._pool(fn, again, args)}
            except ScanInterrupted as e:  # what the first pool finished is kept for resume too
                e.finished = [r for r in out if r.ok] + list(getattr(e, "finished", []))
                raise
            out = [redo.get(r.shard.index, r) for r in out]
            for r in redo.values():
                if not r.ok and r.error == DIED:
                    r.error = DIED_TWICE
        self.shards_done += len(out)
        return out

    def _pool(self, fn: ShardFn, shards: Sequence[Shard], args: tuple) -> list[ShardResult]:
        """The shards in worker processes (one per core at most); Ctrl-C stops them at once."""
        ctx = multiprocessing.get_context("forkserver")
        n = min(self.workers, len(shards))
        with ProcessPoolExecutor(n, mp_context=ctx, initializer=_worker_init) as ex:
            futs = [_submit(ex, timed, fn, s.path, s.start, s.end, 1, *args) for s in shards]
            total = sum(s.bytes for s in shards)
            try:
                while not all(f.done() for f in futs):  # wake up for Ctrl-C, not only at the end
                    wait(futs, timeout=0.2)
                    checkpoint(sum(s.bytes for f, s in zip(futs, shards) if f.done()), total)
            except ScanInterrupted as e:
                e.finished = [_result(s, f) for s, f in zip(shards, futs)  # for a resumed run
                              if f.done() and not f.cancelled() and f.exception() is None]
                _stop_workers(ex)  # now, not when they finish
                raise
            out = [_result(s, f) for s, f in zip(shards, futs)]
            if any(r.error == DIED for r in out):
                # a broken pool: leaving the block joins every worker, and CPython 3.11 can
                # miss one spawned by a submit as the pool broke (its manager iterates the
                # workers while submit adds one): never terminated, it was waited for forever
                _stop_workers(ex)
            return out

    def info(self) -> ExecutorInfo:
        return ExecutorInfo("local", self.workers, 1,
                            {"local": self.shards_done} if self.shards_done else {},
                            tasks=dict(self.tasks))

    def close(self) -> None:
        pass


def _stop_workers(ex: ProcessPoolExecutor) -> None:
    for p in list(getattr(ex, "_processes", {}).values()):
        p.terminate()


def _submit(ex: ProcessPoolExecutor, *call) -> Future:
    """ex.submit(*call); a shard the pool can no longer take (a worker died while the shards
    were handed out, and the pool broke) is one that died with it: it runs again, as the
    shards the dead worker took down do."""
    try:
        return ex.submit(*call)
    except BrokenProcessPool as e:
        fut: Future = Future()
        fut.set_exception(e)
        return fut


def _result(shard: Shard, fut) -> ShardResult:
    try:
        value, secs = fut.result()
        return ShardResult(shard, value, seconds=secs)
    except BrokenProcessPool:
        return ShardResult(shard, error=DIED)
    except OSError as e:
        return ShardResult(shard, error=f"{type(e).__name__}: {e.strerror or e}")
