"""The Ray executor: shards run as Ray tasks on a cluster, or on a local Ray instance.

- Joining: ``--ray-address HOST:PORT``, else RAY_ADDRESS, else a local instance is started (and
  the run says so). Ray is the ``rlm[ray]`` extra; without it, asking for it is a usage error.
- Every shard is one task with ``max_retries=1``: a task whose worker process dies is run once
  more (Ray's own retry); an exception raised by the scan itself is not retried (it would fail
  the same way). A shard that still fails is returned failed, with the reason; the caller names
  it in the coverage statement.
- At most ``workers`` tasks are in flight (the cluster's CPUs by default), so the driver's
  memory holds a bounded number of partial tables at once.
- Ctrl-C (rlm.engine.interrupt.checkpoint, polled between waits) cancels every task in flight.
- Every worker must see the corpus at the same path: `check_path` runs one task per alive node
  and names the first node that cannot read it, before any work.
"""

from __future__ import annotations

import os
import socket
import sys
from collections import Counter
from typing import Any, Sequence

from rlm.errors import UsageError
from rlm.executor.base import ExecutorInfo, ShardFn, ShardResult, timed
from rlm.executor.shards import Shard
from rlm.engine.interrupt import ScanInterrupted, checkpoint

RAY_EXTRA_HINT = "pip install 'rlm[ray]'"
WAIT_S = 0.2  # how often the driver wakes up for Ctrl-C and progress while tasks run


def import_ray():
    try:
        import ray  # noqa: PLC0415 - the optional extra, imported only when asked for
    except ImportError:
        raise UsageError(f"--executor ray needs the ray extra: {RAY_EXTRA_HINT}") from None
    return ray


def _run_shard(fn: ShardFn, path: str, start: int, end: int, args: tuple
               ) -> tuple[Any, str, float]:
    """The task body: one shard, the node it ran on, and its own scan time."""
    import ray

    value, secs = timed(fn, path, start, end, 1, *args)
    return value, ray.get_runtime_context().get_node_id(), secs


def _stat_path(path: str) -> tuple[str, str | None]:
    """On one node: can this process read `path` (a file, or a folder it can list)?"""
    host = socket.gethostname()
    try:
        if os.path.isdir(path):
            os.listdir(path)
        else:
            with open(path, "rb") as fh:
                fh.read(1)
    except OSError as e:
        return host, f"{e.strerror or type(e).__name__}"
    return host, None


class RayExecutor:
    name = "ray"

    def __init__(self, address: str | None = None, workers: int | None = None,
                 say=None):
        ray = import_ray()
        self.ray = ray
        self.owns = False  # this executor started (or connected) Ray, so it shuts it down
        self.started_local = False
        if not ray.is_initialized():
            self._connect(address, workers, say)
        _ray_notes_to_stderr()
        nodes = self.alive_nodes()
        cpus = int(sum(n.get("Resources", {}).get("CPU", 0) for n in nodes))
        env = os.environ.get("RLM_RAY_WORKERS", "").strip()  # tasks in flight (tests, benchmarks)
        self.workers = max(1, workers or (int(env) if env.isdigit() else 0) or cpus)
        self.per_node: Counter[str] = Counter()
        self.tasks: Counter[str] = Counter()  # what ran on the workers, by kind
        self._remote: dict[Any, Any] = {}
        self._node_names = {n["NodeID"]: _node_name(n, nodes) for n in nodes}
        self._checked: set[str] = set()

    def _connect(self, address: str | None, workers: int | None, say) -> None:
        ray = self.ray
        address = address or os.environ.get("RAY_ADDRESS") or None
        kw: dict[str, Any] = dict(include_dashboard=False, log_to_driver=False,
                                  logging_level="ERROR")
        try:
            if address:
                ray.init(address=address, **kw)
            else:
                ray.init(num_cpus=workers or None, **kw)
                self.started_local = True
        except (ConnectionError, RuntimeError, ValueError) as e:
            where = f"the Ray cluster at {address}" if address else "a local Ray instance"
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise UsageError(f"cannot reach {where}: {first}") from None
        self.owns = True
        if self.started_local and say is not None:
            say("no Ray cluster given (--ray-address, RAY_ADDRESS): started a local Ray "
                "instance on this machine")

    def alive_nodes(self) -> list[dict]:
        return [n for n in self.ray.nodes() if n.get("Alive")]

    def check_path(self, path: str) -> None:
        """One task per alive node opens `path`; a node that cannot is a usage error naming
        it. Done once per path and executor."""
        path = os.path.abspath(path)
        if path in self._checked:
            return
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        stat = self.ray.remote(_stat_path)
        refs = {stat.options(num_cpus=0, max_retries=1,
                             scheduling_strategy=NodeAffinitySchedulingStrategy(
                                 n["NodeID"], soft=False)).remote(path): n
                for n in self.alive_nodes()}
        for ref, node in refs.items():
            _host, why = self.ray.get(ref)
            if why is not None:
                raise UsageError(f"Ray node {self._node_names.get(node['NodeID'], '?')} cannot "
                                 f"read {path}: {why} (every node must see the corpus at the "
                                 "same path)")
        self._checked.add(path)

    def run_shards(self, fn: ShardFn, shards: Sequence[Shard], args: tuple = (),
                   label: str = "scan", light: bool = False) -> list[ShardResult]:
        ray = self.ray
        self.tasks[label] += len(shards)
        for p in sorted({s.path for s in shards}):
            self.check_path(p)
        task = ray.remote(_run_shard).options(max_retries=1, retry_exceptions=False,
                                              num_cpus=1)
        results: dict[int, ShardResult] = {}
        pending: dict[Any, Shard] = {}
        todo = list(shards)
        total, done = sum(s.bytes for s in shards), 0
        try:
            while todo or pending:
                while todo and len(pending) < self.workers:
                    s = todo.pop(0)
                    pending[task.remote(fn, s.path, s.start, s.end, args)] = s
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=WAIT_S)
                for ref in ready:
                    s = pending.pop(ref)
                    results[s.index] = self._outcome(s, ref)
                    done += s.bytes
                checkpoint(done, total)
        except (ScanInterrupted, KeyboardInterrupt) as e:
            for ref in pending:
                ray.cancel(ref, force=True)
            e.finished = [r for r in results.values() if r.ok]  # kept for a resumed run
            raise
        return [results[s.index] for s in shards]

    async def offload(self, label: str, fn, *args) -> Any:
        """fn(*args) as one Ray task (run once more if its worker dies), awaited without
        blocking the driver's loop; None when it still fails (the caller then does it here)."""
        import asyncio

        ray = self.ray
        remote = self._remote.get(fn)
        if remote is None:
            remote = self._remote[fn] = ray.remote(fn).options(
                max_retries=1, retry_exceptions=False, num_cpus=1)
        ref = remote.remote(*args)
        try:
            value = await asyncio.wrap_future(ref.future())
        except ray.exceptions.RayError:
            return None
        except BaseException:
            ray.cancel(ref, force=True)
            raise
        self.tasks[label] += 1
        return value

    def _outcome(self, shard: Shard, ref) -> ShardResult:
        ray = self.ray
        try:
            value, node_id, secs = ray.get(ref)
        except ray.exceptions.WorkerCrashedError:
            return ShardResult(shard, error="its Ray worker died, twice (retried once)")
        except ray.exceptions.RayTaskError as e:
            cause = getattr(e, "cause", None) or e
            return ShardResult(shard, error=f"{type(cause).__name__}: {cause}".splitlines()[0])
        except ray.exceptions.RayError as e:  # node died, object lost, cancelled
            return ShardResult(shard, error=f"Ray: {type(e).__name__}")
        name = self._node_names.get(node_id) or node_id[:8]
        self.per_node[name] += 1
        return ShardResult(shard, value, node=name, seconds=secs)

    def info(self) -> ExecutorInfo:
        return ExecutorInfo("ray", self.workers, len(self.alive_nodes()), dict(self.per_node),
                            self.started_local, dict(self.tasks))

    def close(self) -> None:
        if self.owns and self.ray.is_initialized():
            self.ray.shutdown()


def _ray_notes_to_stderr() -> None:
    """Ray's driver prints the raylet's notes ("a worker died ...") on stdout, where rlm writes
    the JSON report: send them to stderr. Ray internals: skipped if they moved."""
    try:
        from ray._private import worker as ray_worker
    except ImportError:
        return
    printer = getattr(ray_worker, "print_to_stdstream", None)
    if printer is None or getattr(printer, "rlm_stderr", False):
        return

    def to_stderr(data, ignore_prefix: bool):
        return printer(dict(data, is_err=True), ignore_prefix)

    to_stderr.rlm_stderr = True  # type: ignore[attr-defined]
    ray_worker.print_to_stdstream = to_stderr


def _node_name(node: dict, nodes: list[dict]) -> str:
    """A node's address; with its id's first characters when several share one address."""
    addr = node.get("NodeManagerAddress") or "?"
    same = sum(1 for n in nodes if n.get("NodeManagerAddress") == addr)
    return addr if same == 1 else f"{addr}/{node['NodeID'][:8]}"


def say_stderr(msg: str) -> None:
    print(f"rlm: {msg}", file=sys.stderr)
