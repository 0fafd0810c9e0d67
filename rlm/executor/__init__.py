"""Where scans (and, on Ray, map calls) run: ``local`` (the default) or ``ray`` (the extra).

The choice: ``--executor`` > RLM_EXECUTOR > the user config file (``rlm config set executor``) >
``local``. A run opens its executor once (`opened`) and the scans find it with `current()`;
code outside a run (tests, library calls of the corpus functions) gets a local one.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterator

from rlm.errors import UsageError
from rlm.executor.base import Executor, ExecutorInfo, ShardResult
from rlm.executor.local import LocalExecutor
from rlm.executor.shards import Shard, plan_shards

__all__ = ["Executor", "ExecutorInfo", "LocalExecutor", "Shard", "ShardResult", "choose",
           "current", "open_executor", "opened", "plan_shards", "precheck"]

NAMES = ("local", "ray")

_current: ContextVar[Executor | None] = ContextVar("rlm_executor", default=None)


def current() -> Executor:
    """The run's executor, or a fresh local one outside a run."""
    return _current.get() or LocalExecutor()


def choose(name: str | None = None) -> str:
    """The executor's name from the option, RLM_EXECUTOR, the config file, or 'local'."""
    from rlm.models import config

    for value, source in ((name, "--executor"), (os.environ.get("RLM_EXECUTOR"), "RLM_EXECUTOR"),
                          (config.load().get("executor"), "config executor")):
        if value and value.strip():
            v = value.strip().lower()
            if v not in NAMES:
                raise UsageError(f"{source}: unknown executor {value.strip()!r} "
                                 f"(known: {', '.join(NAMES)})")
            return v
    return "local"


def precheck(name: str | None = None, address: str | None = None) -> str:
    """The executor's name, checked without starting anything: an unknown name, Ray without
    its extra, or --ray-address without Ray is a usage error before the model check and the
    corpus (Ray itself starts only after the model server answered)."""
    which = choose(name)
    if which == "ray":
        import importlib.util

        if importlib.util.find_spec("ray") is None:
            from rlm.executor.ray_cluster import RAY_EXTRA_HINT

            raise UsageError(f"--executor ray needs the ray extra: {RAY_EXTRA_HINT}")
    elif address:
        raise UsageError("--ray-address needs --executor ray")
    return which


def open_executor(name: str | None = None, address: str | None = None,
                  workers: int | None = None, say=None) -> Executor:
    """The chosen executor, started (Ray: joined or started locally)."""
    which = choose(name)
    if which == "ray":
        from rlm.executor.ray_cluster import RayExecutor

        return RayExecutor(address=address, workers=workers, say=say)
    if address:
        raise UsageError("--ray-address needs --executor ray")
    return LocalExecutor(workers)


@contextmanager
def opened(name: str | None = None, address: str | None = None, workers: int | None = None,
           say=None) -> Iterator[Executor]:
    """Open the executor for one run and make it `current()` inside; closed on exit."""
    ex = open_executor(name, address, workers, say)
    token = _current.set(ex)
    try:
        yield ex
    finally:
        _current.reset(token)
        ex.close()


@contextmanager
def using(ex: Executor) -> Iterator[Executor]:
    """Make an executor that is already open `current()` inside (tests, benchmarks)."""
    token = _current.set(ex)
    try:
        yield ex
    finally:
        _current.reset(token)
