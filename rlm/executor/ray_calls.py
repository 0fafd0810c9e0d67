"""Map calls on Ray: a model whose requests are sent from Ray workers, with the driver's budget
approving every request before it leaves.

The call layer stays on the driver, unchanged: redaction, the call cache, schema validation and
the retries with the validation error (rlm.engine.call) wrap `RemoteModel` as they wrap any
model, so a cache hit never reaches Ray and the cache key is the same as on the local executor.
Only `complete()` (the model's own requests: the format ladder, transport retries) runs in a
Ray task, on a model built there from the same spec.

The budget stays one hard cap, enforced on the driver: every request a worker is about to send
asks the `RequestGate` actor, which hands the question to the driver; the driver runs the run's
own request guard (rlm.engine.call: `Budget.reserve`, which counts calls in flight) and answers
yes, or no with the reason (the worker then raises BudgetExhausted and sends nothing). So
spent + reserved never passes a cap, whatever the number of workers. Tasks in flight are at most
``--concurrency`` (the mapper's pool), which bounds the requests per endpoint as locally.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from rlm.errors import BudgetExhausted, RlmError
from rlm.models.base import Completion, Limits, request_guard

_GATE: dict[tuple, Any] = {}  # the driver's RequestGate actor (by Ray session), made on first use
_LOOP: asyncio.AbstractEventLoop | None = None  # a worker's own loop (its models' clients live on it)
_MODELS: dict[tuple, Any] = {}  # models built in this worker, by spec


class RequestGate:
    """Ray actor (async): a worker's `ask(tid)` waits until the driver, which waits in
    `next(tid)`, `decide`s whether that request may be sent."""

    def __init__(self):
        self.asked: dict[str, asyncio.Queue] = {}
        self.waiting: dict[str, asyncio.Future] = {}

    def _queue(self, tid: str) -> asyncio.Queue:
        return self.asked.setdefault(tid, asyncio.Queue())

    async def ask(self, tid: str) -> tuple[bool, str]:
        fut = asyncio.get_running_loop().create_future()
        self._queue(tid).put_nowait(fut)
        return await fut

    async def next(self, tid: str) -> bool:
        fut = await self._queue(tid).get()
        if fut is None:  # the call ended while the driver waited
            return False
        self.waiting[tid] = fut
        return True

    def decide(self, tid: str, ok: bool, why: str = "") -> None:
        fut = self.waiting.pop(tid, None)
        if fut is not None and not fut.done():
            fut.set_result((ok, why))

    def forget(self, tid: str) -> None:
        q = self.asked.pop(tid, None)
        if q is not None:
            q.put_nowait(None)
        fut = self.waiting.pop(tid, None)
        if fut is not None and not fut.done():
            fut.set_result((False, "the call ended"))


def gate():
    import ray

    ctx = ray.get_runtime_context()  # a new Ray session needs a new actor: job ids restart
    job = (ctx.get_job_id(), ctx.get_node_id())  # at 1 in each session, node ids do not
    g = _GATE.get(job)
    if g is None:
        _GATE.clear()
        g = _GATE[job] = ray.remote(RequestGate).options(num_cpus=0).remote()
    return g


def _endpoint_counts(model) -> list[tuple[int, int]] | None:
    """(calls, failures) of each replica, when `model` is a pool of several endpoints."""
    stats = getattr(model, "stats", None)
    return None if stats is None else [(st.calls, st.failures) for st in stats]


def _remote_complete(build: tuple, messages: list[dict], schema: dict | None, limits: Limits,
                     schema_name: str, gate_actor, tid: str) -> tuple[Completion, list | None]:
    """The task body, in a Ray worker: the model's requests, each one approved first."""
    import ray

    global _LOOP

    def guard() -> None:
        ok, why = ray.get(gate_actor.ask.remote(tid))
        if not ok:
            raise BudgetExhausted(why)

    async def go() -> tuple[Completion, list | None]:
        model = _MODELS.get(build)
        if model is None:
            from rlm.models.registry import resolve_model

            spec, urls, key, timeout = build
            model = _MODELS[build] = resolve_model(spec, urls, key, timeout=timeout)
        before = _endpoint_counts(model)
        token = request_guard.set(guard)
        try:
            comp = await model.complete(messages, schema, limits, schema_name=schema_name)
        finally:
            request_guard.reset(token)
        after = _endpoint_counts(model)
        return comp, None if after is None else [
            (a[0] - b[0], a[1] - b[1]) for a, b in zip(after, before)]

    if _LOOP is None:
        _LOOP = asyncio.new_event_loop()
    return _LOOP.run_until_complete(go())


class RemoteModel:
    """The driver's side: the same Model protocol as `inner` (name, window, token counts,
    endpoints for the preflight), with `complete()` run as a Ray task."""

    def __init__(self, inner, build: tuple, num_cpus: float = 0):
        self.inner = inner
        self.name = inner.name
        self.context_tokens = inner.context_tokens
        self._build = build
        self._num_cpus = num_cpus

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.inner, attr)

    def __repr__(self) -> str:
        return f"RemoteModel({self.inner!r})"

    def describe(self) -> str:
        from rlm.models.registry import describe

        return describe(self.inner) + " (requests from Ray workers)"

    async def complete(self, messages: list[dict[str, str]], schema: dict[str, Any] | None,
                       limits: Limits, schema_name: str = "result") -> Completion:
        import ray

        tid = uuid.uuid4().hex
        g = gate()
        task = ray.remote(_remote_complete).options(max_retries=1, retry_exceptions=False,
                                                    num_cpus=self._num_cpus)
        ref = task.remote(self._build, messages, schema, limits, schema_name, g, tid)
        _count_task()
        try:
            comp, deltas = await _serve(ref, g, tid, request_guard.get())
        except BaseException:
            ray.cancel(ref, force=True)
            raise
        finally:
            g.forget.remote(tid)
        stats = getattr(self.inner, "stats", None)  # the replicas' usage, for the report
        for st, (calls, failures) in zip(stats or [], deltas or []):
            st.calls += calls
            st.failures += failures
        return comp

    async def aclose(self) -> None:
        await self.inner.aclose()


def _count_task() -> None:
    """One more model call sent from a worker, in the report's `tasks`."""
    from rlm.executor import current

    tasks = getattr(current(), "tasks", None)
    if tasks is not None:
        tasks["model calls"] += 1


async def _serve(ref, g, tid: str, guard) -> tuple[Completion, list | None]:
    """Answer the task's requests with the run's guard until its result is there."""
    import ray

    result = asyncio.wrap_future(ref.future())
    while True:
        asked = asyncio.wrap_future(g.next.remote(tid).future())
        done, _ = await asyncio.wait({result, asked}, return_when=asyncio.FIRST_COMPLETED)
        if asked in done:
            try:
                if guard is not None:
                    guard()
            except BudgetExhausted as e:
                g.decide.remote(tid, False, str(e))
            else:
                g.decide.remote(tid, True)
        if result in done:
            asked.cancel()
            try:
                return result.result()
            except ray.exceptions.RayTaskError as e:
                raise _cause(e) from None
            except ray.exceptions.WorkerCrashedError:
                from rlm.errors import ModelCallError

                raise ModelCallError("its Ray worker died, twice (retried once)") from None


def _cause(e) -> BaseException:
    cause = getattr(e, "cause", None)
    return cause if isinstance(cause, (RlmError, OSError)) else RuntimeError(str(e).splitlines()[0])


def remote_model(model, spec: str | None, base_url: str | None, api_key: str | None,
                 timeout: float):
    """`model` with its requests sent from Ray workers, when it is one that can be rebuilt
    there (a served endpoint, or the embedded model); others (code only, simulated readers,
    MCP sampling) stay as they are."""
    from rlm.models import registry

    ch = registry.choose(spec, base_url)
    if ch.spec in ("none", "sampling") or ch.spec.startswith("sim:"):
        return model
    if ch.spec == "local":
        return RemoteModel(model, ("local", None, None, timeout), num_cpus=1)
    key = api_key or registry._env("RLM_API_KEY")
    urls = ch.urls
    if ch.spec.startswith("openai:"):
        key = api_key or registry._env("OPENAI_API_KEY") or registry._env("RLM_API_KEY")
        urls = urls or registry.split_urls(registry._env("OPENAI_BASE_URL")) or [
            registry.OPENAI_DEFAULT_BASE_URL]
    return RemoteModel(model, (ch.spec, ",".join(urls), key, timeout))
