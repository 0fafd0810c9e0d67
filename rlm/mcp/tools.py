"""The MCP tools: ask, audit, mine, runs, show, resume, grep, read_lines.

Each tool checks its paths against the roots first (nothing outside is ever opened), runs the
library function, and returns the report as structured output plus a short text summary.
Errors are one line (ToolError), never a traceback.
"""

from __future__ import annotations

import contextlib
import warnings
from typing import Annotated, Any, Iterator, Literal

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, ClientCapabilities, RootsCapability, TextContent
from pydantic import BaseModel, Field

from rlm.errors import RlmError, UsageError
from rlm.mcp import bounded, runs
from rlm.mcp.config import ServerConfig
from rlm.mcp.progress import ProgressRelay, run_interruptible
from rlm.mcp.roots import Roots
from rlm.mcp.runs import RunsResult
from rlm.mcp.sampling import SamplingModel, code_only_model, sampling_unavailable
from rlm.mcp.summary import report_result
from rlm.schemas import Report
from rlm.schemas_repo import AuditReport, MineReport

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
    except ToolError:
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
    async def _roots(self, ctx: Context) -> tuple[Roots, list[str]]:
        """The server's roots plus those this client declares (asked per call: roots are per
        client, and a client may change them)."""
        s = ctx.session
        if not (s.check_client_capability(ClientCapabilities(roots=RootsCapability()))
                and s.can_send_request):
            return self.roots, []
        try:
            import anyio

            with anyio.fail_after(10), warnings.catch_warnings():
                warnings.simplefilter("ignore")  # roots are deprecated in the 2026 spec
                res = await s.list_roots()
        except Exception as e:  # noqa: BLE001 - the server's own roots still apply
            return self.roots, [f"the client's roots could not be listed ({type(e).__name__})"]
        view = Roots.__new__(Roots)
        view.fixed, view._written = self.roots.fixed, self.roots._written
        return view, view.set_client_roots([str(r.uri) for r in res.roots])

    def _model(self, ctx: Context, opts: Any) -> tuple[Any, str | None]:
        """(model to pass to the run or None to resolve from opts, one-line notice)."""
        if not self.cfg.sampling:
            return None, None
        from rlm import store

        why = sampling_unavailable(ctx)
        if why is None:
            return store.wrap_model(SamplingModel(ctx, self.cfg.sampling_context), opts), None
        model = code_only_model(why)
        if model.name == "none" and type(model).__name__ == "_NoModel":
            return model, (f"{why}: no model reads this run, and this build has no code-only "
                           "mode, so chunks only a model could read are reported as failed")
        return model, f"{why}: running code-only"

    def _ask_options(self, command: str, strategy: str | None, max_calls: int | None,
                     max_tokens: int | None, resume: str | None = None):
        from rlm.api import AskOptions

        c = self.cfg
        return AskOptions(model=c.model, base_url=c.base_url,
                          sub_model=None if c.sampling else c.sub_model,
                          concurrency=c.concurrency, max_tokens=max_tokens or c.max_tokens,
                          max_calls=max_calls or c.max_calls, timeout=c.timeout,
                          strategy=strategy, command=command, resume=resume)

    async def _run_ask(self, ctx: Context, path: str, question: str, opts: Any) -> CallToolResult:
        from rlm.api import ask_async

        model, notice = self._model(ctx, opts)
        relay = ProgressRelay(ctx)

        async def work(interrupt):
            try:
                return await ask_async(path, question, opts, model=model, on_event=relay.event,
                                       interrupt=interrupt)
            finally:
                if model is not None:
                    await model.aclose()

        rep = await run_interruptible(work, relay)
        return report_result(rep, [notice] if notice else [])

    # -- tools ----------------------------------------------------------------------------------
    async def ask(self, path: PathArg,
                  question: Annotated[str, Field(description="the question, in plain words; "
                                                 "quote exact strings or ids to search for")],
                  ctx: Context, strategy: Annotated[Strategy | None, Field(
                      description="force a strategy (default: rlm's gate decides)")] = None,
                  max_calls: MaxCalls = None, max_tokens: MaxTokens = None,
                  ) -> Annotated[CallToolResult, Report]:
        with one_line_errors():
            roots, _ = await self._roots(ctx)
            real = roots.resolve(path)
            opts = self._ask_options("ask", strategy, max_calls, max_tokens)
            return await self._run_ask(ctx, str(real), question, opts)

    async def resume(self, run_id: RunArg, ctx: Context) -> Annotated[CallToolResult, Report]:
        with one_line_errors():
            roots, _ = await self._roots(ctx)
            rid, path, question = runs.resume_target(roots, run_id)
            opts = self._ask_options("ask", None, None, None, resume=rid)
            return await self._run_ask(ctx, path, question, opts)

    async def audit(self, repo: PathArg, ctx: Context,
                    focus: Annotated[str | None, Field(description="lenses, comma-separated: "
                                                       "structure, risks, tests (default all)")] = None,
                    ) -> Annotated[CallToolResult, AuditReport]:
        from rlm.audit import AuditOptions, audit_async, parse_lenses

        with one_line_errors():
            roots, _ = await self._roots(ctx)
            real = roots.resolve(repo, "repo")
            if not real.is_dir():
                raise UsageError(f"{repo} is not a folder: audit takes a repository folder")
            c = self.cfg
            opts = AuditOptions(model=c.model, base_url=c.base_url, concurrency=c.concurrency,
                                max_tokens=c.max_tokens, max_calls=c.max_calls, timeout=c.timeout,
                                lenses=parse_lenses(focus))
            model, notice = self._model(ctx, opts)
            relay = ProgressRelay(ctx)
            rep = await run_interruptible(lambda _i: audit_async(str(real), opts, model=model,
                                                                 on_event=relay.event), relay)
            return report_result(rep, [notice] if notice else [])

    async def mine(self, repo: PathArg,
                   questions: Annotated[list[str], Field(min_length=1, description="one or more "
                                                         "questions about the code")],
                   ctx: Context) -> Annotated[CallToolResult, MineReport]:
        from rlm.mine import MineOptions, mine_async

        with one_line_errors():
            roots, _ = await self._roots(ctx)
            real = roots.resolve(repo, "repo")
            if not real.is_dir():
                raise UsageError(f"{repo} is not a folder: mine takes a repository folder")
            c = self.cfg
            opts = MineOptions(model=c.model, base_url=c.base_url, concurrency=c.concurrency,
                               max_tokens=c.max_tokens, max_calls=c.max_calls, timeout=c.timeout)
            model, notice = self._model(ctx, opts)
            relay = ProgressRelay(ctx)
            rep = await run_interruptible(lambda _i: mine_async(str(real), questions, opts,
                                                                model=model, on_event=relay.event),
                                          relay)
            return report_result(rep, [notice] if notice else [])

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

    async def show(self, run_id: RunArg, ctx: Context) -> Annotated[CallToolResult, Report]:
        with one_line_errors():
            roots, _ = await self._roots(ctx)
            r = runs.get_run(roots, run_id)
            if r.get("report") is None:
                raise UsageError(runs.no_report_line(r))
            return report_result(Report.model_validate(r["report"]), [], raw=r["report"])

    async def grep(self, path: PathArg,
                   pattern: Annotated[str, Field(description="a Python regular expression")],
                   ctx: Context, max_hits: Annotated[int | None, Field(
                       ge=1, le=bounded.GREP_MAX_HITS, description="matching lines to return "
                       f"(default {bounded.GREP_DEFAULT_HITS})")] = None,
                   ) -> Annotated[CallToolResult, bounded.GrepResult]:
        with one_line_errors():
            roots, _ = await self._roots(ctx)
            real = roots.resolve(path)
            import anyio

            res = await anyio.to_thread.run_sync(bounded.grep, real, path, pattern, max_hits)
            text = [res.statement] + [f"{h.path}:{h.line}: {h.text}" for h in res.hits]
            return _result("\n".join(text), res)

    async def read_lines(self, path: PathArg,
                         start: Annotated[int, Field(ge=1, description="first line, 1-based")],
                         end: Annotated[int, Field(ge=1, description="last line, inclusive")],
                         ctx: Context) -> Annotated[CallToolResult, bounded.LinesResult]:
        with one_line_errors():
            roots, _ = await self._roots(ctx)
            real = roots.resolve(path)
            import anyio

            res = await anyio.to_thread.run_sync(bounded.read_lines, real, path, start, end)
            text = [res.statement] + [f"{x.line}: {x.text}" for x in res.lines]
            return _result("\n".join(text), res)


def _result(text: str, model: BaseModel) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)],
                          structured_content=model.model_dump(mode="json"))
