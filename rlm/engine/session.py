"""One session per run of any command: models + call cache + sub-model + redaction + budget +
Ctrl-C watcher + run record + typed events.

How a command uses it (ask does exactly this; audit and mine can do the same)::

    async with Session.open(opts, path=path, question=question, model=model,
                            on_event=on_event, handle_sigint=True) as s:
        # s.model: the main model (synthesis); s.sub: the sub-calls' model (s.model without
        #   --sub-model); both behind the call cache and redaction, closed when the block ends
        # s.budget: tokens / calls / wall time shared by every call; s.scope: the cancel scope
        #   to give to map_items (Ctrl-C and a cancelled MCP request cancel it); code scans
        #   call rlm.engine.interrupt.checkpoint() so Ctrl-C stops them too
        # s.emit(event): a typed rlm.engine.events event to the progress display and the run record
        # s.run_id: the id `rlm runs`, `show` and `resume` know the run by
        report = ...  # the command's work, a Report (or a subclass)
        return s.finish(report)  # wall time, --redact-report masking; recorded on exit

``opts`` is a :class:`rlm.engine.options.RunOptions` (or subclass): ``--resume RUN`` makes the call
cache answer what that run answered, so only its failed or unfinished units call the model.
A block that raises is recorded with its error, and a dry run records nothing.
"""

from __future__ import annotations

import time
import uuid
from contextlib import ExitStack, asynccontextmanager
from typing import Any, AsyncIterator, Awaitable, Callable

import anyio

from rlm import executor
from rlm.engine import interrupt as scanctl
from rlm.redact import model as redact_model
from rlm import store
from rlm.engine.budget import Budget, watch_event
from rlm.engine.call import on_rejected
from rlm.models.base import Model
from rlm.engine.preflight import check_endpoints
from rlm.engine.events import Event, Rejected, Scan, Sink
from rlm.engine import window
from rlm.engine.options import RunOptions


def new_run_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]


class Session:
    def __init__(self, opts: RunOptions, model: Model | None, sub: Model | None,
                 sink: Sink | None):
        self.opts = opts
        self.model = model
        self.sub = sub or model
        self.budget = Budget(opts.max_tokens, opts.max_calls, opts.max_wall_s)
        self.run_id = new_run_id()
        self.sink: Sink = sink or (lambda kind, data: None)  # the run record wraps it
        self.scope = anyio.CancelScope()
        self.redaction = None
        self.report: Any = None
        self.executor: Any = None  # rlm.executor: where scans (and Ray map calls) run
        self.started = time.monotonic()

    def emit(self, ev: Event) -> None:
        self.sink(ev.kind, ev.as_dict())

    def finish(self, report):
        """The command's final report: timed, masked under --redact-report, kept for the record."""
        report.usage.wall_s = round(time.monotonic() - self.started, 3)
        if self.executor is not None:
            report.executor = self.executor.info().as_dict()
        if self.redaction is not None and self.redaction.report:
            report = redact_model.mask_report(report, self.redaction)
        self.report = report
        return report

    @classmethod
    @asynccontextmanager
    async def open(cls, opts: RunOptions, *, path: str, question: str, model: Model | None = None,
                   on_event: Sink | None = None, handle_sigint: bool = False,
                   interrupt: anyio.Event | None = None,
                   prepare: Callable[[], Awaitable[None]] | None = None,
                   ) -> AsyncIterator["Session"]:
        """``prepare`` runs after the models answered their preflight and before the run record
        starts (ask opens its corpus there: a bad corpus is a usage error, not a recorded run),
        inside the scan control, so Ctrl-C stops it at its next checkpoint."""
        own = model is None
        sub = rec = reset = None
        error: BaseException | None = None
        s = cls(opts, None, None, on_event)  # budget, scope and events exist from the start
        pre = anyio.CancelScope()

        def on_interrupt() -> None:  # in the loop, after the first Ctrl-C
            s.budget.interrupted = True
            pre.cancel()
            s.scope.cancel()

        try:
            with scanctl.controlled(on_interrupt, handle_sigint=handle_sigint,
                                    on_progress=lambda w, d, t: s.emit(Scan(w, d, t))), \
                    ExitStack() as stack:
                executor.precheck(opts.executor, opts.ray_address)  # a bad name: exit 2 now
                if model is None:
                    model = _resolve(opts.model, opts)
                if opts.sub_model:
                    sub = _resolve(opts.sub_model, opts)
                window.check_question([model, sub], question, opts.usable_fraction)
                if own and not opts.dry_run:  # the server first, then Ray, then the corpus
                    with pre:
                        await check_endpoints(model)
                        if sub is not None:
                            await check_endpoints(sub)
                    scanctl.checkpoint()
                s.executor = ex = stack.enter_context(
                    executor.opened(opts.executor, opts.ray_address, say=say_stderr))
                if path and path != "-" and hasattr(ex, "check_path"):
                    ex.check_path(path)  # every Ray node must read the corpus: before any work
                if own:
                    model, sub = _placed(model, opts.model, opts, ex), _placed(
                        sub, opts.sub_model, opts, ex)
                if prepare is not None:
                    await prepare()
                # redaction wraps the cache, so the cache only ever sees redacted prompts
                s.redaction = policy = redact_model.decide([model, sub], opts.redact,
                                                           opts.redact_report)
                s.model, s.sub = policy.wrap(model), policy.wrap(sub or model)
                rec = store.record_run(s, path, question, opts)  # checks opts.resume
                if rec is not None and policy.report:
                    rec.mask = policy.redactor.mask_data  # --redact-report: events, report masked
                reset = on_rejected.set(lambda d: s.emit(Rejected(**d)))  # raw rejected replies
                async with anyio.create_task_group() as tg:
                    if interrupt is not None:  # an MCP client cancelled its request
                        watch_event(s.budget, s.scope, tg, interrupt)
                    yield s
                    tg.cancel_scope.cancel()
        except BaseException as e:
            error = e
            raise
        finally:
            if reset is not None:
                on_rejected.reset(reset)
            if rec is not None:
                rec.close(None if error else s.report, error)
            if own and model is not None:
                await model.aclose()
            if sub is not None:
                await sub.aclose()


def say_stderr(msg: str) -> None:
    import sys

    print(f"rlm: {msg}", file=sys.stderr)


def _resolve(spec: str | None, opts: RunOptions) -> Model:
    from rlm.models.registry import resolve_model

    return resolve_model(spec, opts.base_url, opts.api_key, timeout=opts.timeout)


def _placed(m: Model | None, spec: str | None, opts: RunOptions, ex) -> Model | None:
    """The model as the run calls it: on Ray, its requests sent from Ray workers; then the
    call cache (rlm/store) over it, on either executor."""
    if m is None:
        return None
    if getattr(ex, "name", "local") == "ray":
        from rlm.executor.ray_calls import remote_model

        m = remote_model(m, spec, opts.base_url, opts.api_key, opts.timeout)
    return store.wrap_model(m, opts)


Emit = Callable[[Event], None]
