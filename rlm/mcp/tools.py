"""The MCP tools: ask, audit, mine, runs, show, resume, grep, read_lines.

Each tool checks its paths against the roots first (nothing outside is ever opened), runs the
library function, and returns the report as structured output plus a short text summary.
Errors are one line (ToolError), never a traceback.
"""

from __future__ import annotations

import contextlib
from typing import Annotated, Any, Iterator, Literal

import anyio
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, ClientCapabilities, RootsCapability, TextContent
from pydantic import BaseModel, Field

from rlm.corpus.beneath import confined
from rlm.errors import RlmError, UsageError
from rlm.mcp import bounded, rounds, runs
from rlm.mcp.config import ServerConfig
from rlm.mcp.progress import ProgressRelay, run_in_worker
from rlm.mcp.roots import Roots
from rlm.mcp.runs import RunsResult
from rlm.mcp.sampling import (RoundSamplingModel, SamplingModel, code_only_model,
                              sampling_unavailable)
from rlm.mcp.summary import report_result
from rlm.schemas.report import Report
from rlm.schemas.repo_report import AuditReport, MineReport

Strategy = Literal["direct", "grep", "profile", "fanout"]
PathArg = Annotated[str, Field(description="a file or folder, absolute or relative to the first "
                                            "root; must lie under the server's roots")]
RunArg = Annotated[str, Field(description="a run id, a unique prefix of one, or 'last'")]
MaxCalls = Annotated[int | None, Field(ge=1, description="model-call budget for this run")]
MaxTokens = Annotated[int | None, Field(ge=1, description="token budget (prompt + completion)")]


@contextlib.contextmanager
def one_line_errors() -> Iterator[None]:
    """rlm's errors become the tool's one-line error; anything else too, without a traceback."""
    try:
        yield
    except (ToolError, rounds.InputNeeded):
        raise
    except RlmError as e:
        raise ToolError(str(e)) from None
    except BaseExceptionGroup as eg:
        leaf: BaseException = eg
        while isinstance(leaf, BaseExceptionGroup) and leaf.exceptions:
            leaf = leaf.exceptions[0]
        if isinstance(leaf, RlmError):
            raise ToolError(str(leaf)) from None
        raise ToolError(f"internal error: {type(leaf).__name__}: {leaf}") from None
    except OSError as e:
        raise ToolError(f"{e.filename or ''}: {e.strerror or e}".lstrip(": ")) from None
    except Exception as e:  # noqa: BLE001
        raise ToolError(f"internal error: {type(e).__name__}: {e}") from None


class RlmTools:
    def __init__(self, cfg: ServerConfig):
        self.cfg = cfg
        self.roots = Roots(cfg.roots)

    # -- shared ---------------------------------------------------------------------------------
    async def _roots(self, ctx: Context, keep: bool = False) -> tuple[Roots, list[str]]:
        """The server's roots plus those this client declares (asked per call: roots are per
        client, and a client may change them). On a 2026-07-28 connection the roots come in the
        call's first InputRequiredResult round (rounds.InputNeeded), kept for its later rounds
        when `keep` (a run that may sample)."""
        if rounds.is_modern(ctx):
            if not rounds.declares(ctx, "roots"):
                return self.roots, []
            conv = rounds.conversation(ctx)
            if conv.client_roots is None:
                raise rounds.InputNeeded(conv.ask_roots())
            if not keep:
                rounds.forget(conv)
            return self.roots.with_client(conv.client_roots)
        s = ctx.session
        if not (s.check_client_capability(ClientCapabilities(roots=RootsCapability()))
                and s.can_send_request):
            return self.roots, []
        try:
            with anyio.fail_after(10):
                res = await s.list_roots()  # deprecated in the 2026 spec: silenced in server.py
        except Exception as e:  # noqa: BLE001 - the server's own roots still apply
            return self.roots, [f"the client's roots could not be listed ({type(e).__name__})"]
        return self.roots.with_client([str(r.uri) for r in res.roots])

    def _model(self, ctx: Context, opts: Any,
               conv: rounds.Conversation | None) -> tuple[Any, str | None]:
        """(model to pass to the run or None to resolve from opts, one-line notice)."""
        if not self.cfg.sampling:
            return None, None
        from rlm import store

        if conv is not None:  # 2026-07-28: the requests go in the call's rounds
            return store.wrap_model(RoundSamplingModel(conv, self.cfg.sampling_context), opts), None
        why = ("the MCP client does not support sampling" if rounds.is_modern(ctx)
               else sampling_unavailable(ctx))
        if why is None:
            return store.wrap_model(SamplingModel(ctx, self.cfg.sampling_context), opts), None
        return code_only_model(why)

    def _in_rounds(self, ctx: Context) -> rounds.Conversation | None:
        """The call's conversation when its sampling goes in InputRequiredResult rounds."""
        if self.cfg.sampling and rounds.is_modern(ctx) and rounds.declares(ctx, "sampling"):
            return rounds.conversation(ctx)
        return None

    async def _run(self, ctx: Context, opts: Any, run: Any, resumable: bool,
                   notes: list[str], roots: Roots) -> CallToolResult:
        """run(model, interrupt, on_event) in a worker thread with progress, every file opened
        beneath the roots (rlm.corpus.beneath); on a 2026-07-28 connection with sampling,
        across the call's rounds (a later round continues the run)."""
        conv = self._in_rounds(ctx)
        if conv is not None and conv.task is not None:
            return _round_result(conv, await conv.next_round(ctx))
        model, notice = self._model(ctx, opts, conv)
        if conv is not None and hasattr(opts, "concurrency"):  # the client bounds rounds, not calls
            opts.concurrency = max(opts.concurrency or 1, rounds.ROUND_BATCH)

        async def work(interrupt, on_event):  # in the worker thread (rlm.mcp.worker)
            try:
                with confined([str(r) for r in roots.all]):
                    return await run(model, interrupt, on_event)
            finally:
                if model is not None:
                    await model.aclose()

        relay = ProgressRelay(ctx)
        notes = ([notice] if notice else []) + notes
        if conv is None:
            return report_result(await run_in_worker(work, relay, resumable=resumable), notes)
        conv.notes = notes
        conv.start(lambda: run_in_worker(work, relay, resumable=resumable), relay,
                   self.cfg.timeout)
        return _round_result(conv, await conv.next_round(ctx))

    def _ask_options(self, strategy: str | None, max_calls: int | None,
                     max_tokens: int | None, recorded: dict | None = None, resume: str | None = None):
        """This server's model options; for a resume, the recorded run's other options
        (strategy, budgets, window) so that its answered calls are asked the same way."""
        from dataclasses import fields

        from rlm.api import AskOptions

        c = self.cfg
        kw: dict[str, Any] = {}
        if recorded:
            names = {f.name for f in fields(AskOptions)}
            kw = {k: v for k, v in recorded.items() if k in names and k not in
                  ("model", "base_url", "api_key", "sub_model", "resume", "argv", "dry_run")}
        kw.update(model=c.model, base_url=c.base_url, timeout=c.timeout, resume=resume,
                  sub_model=None if c.sampling else c.sub_model, command="ask")
        kw.setdefault("concurrency", c.concurrency)
        if not recorded:
            kw.update(strategy=strategy, max_tokens=max_tokens or c.max_tokens,
                      max_calls=max_calls or c.max_calls)
        return AskOptions(**kw)

    async def _run_ask(self, ctx: Context, path: str, question: str, opts: Any,
                       notes: list[str], roots: Roots) -> CallToolResult:
        from rlm.api import ask_async

        return await self._run(ctx, opts, lambda model, interrupt, on_event: ask_async(
            path, question, opts, model=model, on_event=on_event, interrupt=interrupt),
            True, notes, roots)

    async def _repo_run(self, ctx: Context, opts: Any, run: Any, roots: Roots) -> CallToolResult:
        """audit or mine: run(model, on_event); not resumable, so a cancellation stops it at
        once."""
        return await self._run(ctx, opts, lambda model, _i, on_event: run(model, on_event),
                               False, [], roots)

    # -- tools ----------------------------------------------------------------------------------
    async def ask(self, path: PathArg,
                  question: Annotated[str, Field(description="the question, in plain words; "
                                                 "quote exact strings or ids to search for")],
                  ctx: Context, strategy: Annotated[Strategy | None, Field(
                      description="force a strategy (default: rlm's gate decides)")] = None,
                  max_calls: MaxCalls = None, max_tokens: MaxTokens = None,
                  ) -> Annotated[CallToolResult, Report]:
        with one_line_errors():
            roots, notes = await self._roots(ctx, keep=True)
            real = roots.resolve(path)
            opts = self._ask_options(strategy, max_calls, max_tokens)
            return await self._run_ask(ctx, str(real), question, opts, notes, roots)

    async def resume(self, run_id: RunArg, ctx: Context) -> Annotated[CallToolResult, Report]:
        with one_line_errors():
            roots, notes = await self._roots(ctx, keep=True)
            rid, path, question, recorded = runs.resume_target(roots, run_id)
            opts = self._ask_options(None, None, None, recorded=recorded, resume=rid)
            return await self._run_ask(ctx, path, question, opts, notes, roots)

    async def audit(self, repo: PathArg, ctx: Context,
                    focus: Annotated[str | None, Field(description="lenses, comma-separated: "
                                                       "structure, risks, tests (default all)")] = None,
                    ) -> Annotated[CallToolResult, AuditReport]:
        from rlm.repo.audit import AuditOptions, audit_async, parse_lenses

        with one_line_errors():
            roots, _ = await self._roots(ctx, keep=True)
            real = roots.resolve(repo, "repo")
            if not real.is_dir():
                raise UsageError(f"{repo} is not a folder: audit takes a repository folder")
            c = self.cfg
            opts = AuditOptions(model=c.model, base_url=c.base_url, concurrency=c.concurrency,
                                max_tokens=c.max_tokens, max_calls=c.max_calls, timeout=c.timeout,
                                lenses=parse_lenses(focus))
            return await self._repo_run(ctx, opts, lambda m, ev: audit_async(
                str(real), opts, model=m, on_event=ev), roots)

    async def mine(self, repo: PathArg,
                   questions: Annotated[list[str], Field(min_length=1, description="one or more "
                                                         "questions about the code")],
                   ctx: Context) -> Annotated[CallToolResult, MineReport]:
        from rlm.repo.mine import MineOptions, mine_async

        with one_line_errors():
            roots, _ = await self._roots(ctx, keep=True)
            real = roots.resolve(repo, "repo")
            if not real.is_dir():
                raise UsageError(f"{repo} is not a folder: mine takes a repository folder")
            c = self.cfg
            opts = MineOptions(model=c.model, base_url=c.base_url, concurrency=c.concurrency,
                               max_tokens=c.max_tokens, max_calls=c.max_calls, timeout=c.timeout)
            return await self._repo_run(ctx, opts, lambda m, ev: mine_async(
                str(real), questions, opts, model=m, on_event=ev), roots)

    async def runs(self, ctx: Context, limit: Annotated[int, Field(ge=1, le=200, description=
                                                         "how many recent runs")] = 20,
                   ) -> Annotated[CallToolResult, RunsResult]:
        with one_line_errors():
            roots, _ = await self._roots(ctx)
            res = runs.list_runs(roots, limit)
            lines = [res.statement] + [
                f"{r.id}  {r.status}  {r.strategy or ''}  {r.corpus}  {r.question!r}"
                for r in res.runs]
            return _result("\n".join(lines), res)

    async def show(self, run_id: RunArg,
                   ctx: Context) -> Annotated[CallToolResult, runs.ShownReport]:
        with one_line_errors():
            roots, _ = await self._roots(ctx)
            r = runs.get_run(roots, run_id)
            if r.get("report") is None:
                raise UsageError(runs.no_report_line(r))
            try:
                rep = runs.typed_report(r["report"])
            except ValueError:
                raise UsageError(f"run {r['id']} was recorded by another version of rlm; "
                                 f"`rlm show {r['id']} --json` prints it") from None
            return report_result(rep, [], raw=r["report"])

    async def grep(self, path: PathArg,
                   pattern: Annotated[str, Field(description="a regular expression (RE2: Python "
                                                 "syntax without lookarounds or backreferences)")],
                   ctx: Context, max_hits: Annotated[int | None, Field(
                       ge=1, le=bounded.GREP_MAX_HITS, description="matching lines to return "
                       f"(default {bounded.GREP_DEFAULT_HITS})")] = None,
                   ) -> Annotated[CallToolResult, bounded.GrepResult]:
        with one_line_errors():
            roots, _ = await self._roots(ctx)
            real = roots.resolve(path)
            res = await anyio.to_thread.run_sync(_confined_to(roots, bounded.grep), real, path,
                                                 pattern, max_hits)
            text = [res.statement] + [f"{h.path}:{h.line}: {h.text}" for h in res.hits]
            return _result("\n".join(text), res)

    async def read_lines(self, path: PathArg,
                         start: Annotated[int, Field(ge=1, description="first line, 1-based")],
                         end: Annotated[int, Field(ge=1, description="last line, inclusive")],
                         ctx: Context) -> Annotated[CallToolResult, bounded.LinesResult]:
        with one_line_errors():
            roots, _ = await self._roots(ctx)
            real = roots.resolve(path)
            res = await anyio.to_thread.run_sync(_confined_to(roots, bounded.read_lines), real,
                                                 path, start, end)
            text = [res.statement] + [f"{x.line}: {x.text}" for x in res.lines]
            return _result("\n".join(text), res)


def _confined_to(roots: Roots, fn):
    """fn, run with every open beneath the roots (in the worker thread that runs it)."""
    def run(*args):
        with confined([str(r) for r in roots.all]):
            return fn(*args)
    return run


def _round_result(conv: rounds.Conversation, got: tuple[str, Any]) -> Any:
    """This round's InputRequiredResult, or the finished run's report."""
    kind, value = got
    return value if kind == "input" else report_result(value, conv.notes)


def _result(text: str, model: BaseModel) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)],
                          structured_content=model.model_dump(mode="json"))
