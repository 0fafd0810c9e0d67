"""What every executor offers the scans: run one function over shards, return each shard's
outcome in shard order, and say where the work ran (for the report).

A shard function is a plain module-level function ``fn(path, start, end, threads, *args)``
(picklable by reference, so a worker process or a Ray worker imports it) that returns a
partial table; the scan merges the partial tables by key on the driver, in shard order.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, Sequence

from rlm.executor.shards import Shard

ShardFn = Callable[..., Any]


def timed(fn: ShardFn, *args) -> tuple[Any, float]:
    """fn(*args) and the seconds it took (a module-level function: it crosses processes)."""
    t = time.perf_counter()
    value = fn(*args)
    return value, time.perf_counter() - t


@dataclass
class ShardResult:
    """How one shard ended: its partial table, or why it failed (after the retry)."""

    shard: Shard
    value: Any = None
    error: str | None = None
    node: str = "local"
    seconds: float = 0.0  # the shard's own scan time, where it ran (for the benchmark)

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass
class ExecutorInfo:
    """What the report says about where a run's work ran."""

    name: str
    workers: int
    nodes: int
    shards_per_node: dict[str, int] = field(default_factory=dict)
    started_local: bool = False  # Ray: no cluster given, a local instance was started
    tasks: dict[str, int] = field(default_factory=dict)  # what ran off the driver: kind -> tasks

    def as_dict(self) -> dict:
        return {"name": self.name, "workers": self.workers, "nodes": self.nodes,
                "shards_per_node": dict(self.shards_per_node),
                "started_local": self.started_local, "tasks": dict(self.tasks)}


class Executor(Protocol):
    name: str

    def run_shards(self, fn: ShardFn, shards: Sequence[Shard], args: tuple = (),
                   label: str = "scan", light: bool = False) -> list[ShardResult]:
        """fn over every shard; results in shard order. Raises ScanInterrupted on Ctrl-C
        (the work in flight is cancelled first), with `.finished`: the shards done by then.
        `label`: the scan's name in the report's `tasks`; `light`: a scan cheaper than
        starting a worker process (the local executor keeps it in this process)."""
        ...

    def info(self) -> ExecutorInfo: ...

    def close(self) -> None: ...
