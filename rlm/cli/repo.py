"""`rlm audit REPO` and `rlm mine REPO QUESTION...`: options and rendering; the work is
rlm.repo.audit and rlm.repo.mine."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import List, Optional

import orjson
import typer
from rich.console import Console

from rlm.cli.base import (  # noqa: F401 - the shared options and output
    app, fixture_app, config_app, err, EXIT_OK, EXIT_INTERNAL, EXIT_USAGE, EXIT_INCOMPLETE,
    _fail, _run, _first_leaf, ModelOpt, BaseUrlOpt, _urls, ConcOpt, MaxTokOpt, MaxCallsOpt,
    TimeoutOpt, JsonOpt, OutOpt, DryOpt, QuietOpt, YesOpt, RedactOpt, RedactReportOpt, SubModelOpt,
    NoCacheOpt, _emit, _argv, _emit_repo, exit_code, HtmlOpt, ExecutorOpt, RayAddressOpt,
)


SummaryOpt = typer.Option(
    False, "--summary", help="also a short summary the model writes from the verified findings "
    "only (guarded merge, then synthesis; numbers and names checked by code). The findings stay "
    "the result.")


@app.command("audit")
def audit_cmd(
    repo: str = typer.Argument(..., help="the repository folder"),
    lens: Optional[str] = typer.Option(None, "--lens", help="comma-separated lenses to dig with: "
                                       "structure,risks,tests (default: all three)"),
    max_rounds: int = typer.Option(6, "--max-rounds", min=1, max=50, help="at most this many rounds"),
    model: Optional[str] = ModelOpt,
    base_url: Optional[List[str]] = BaseUrlOpt,
    sub_model: Optional[str] = SubModelOpt,
    concurrency: int = ConcOpt,
    max_tokens: Optional[int] = MaxTokOpt,
    max_calls: Optional[int] = MaxCallsOpt,
    timeout: float = TimeoutOpt,
    json_out: bool = JsonOpt,
    out: Optional[Path] = OutOpt,
    html: Optional[Path] = HtmlOpt,
    dry_run: bool = DryOpt,
    quiet: bool = QuietOpt,
    redact: Optional[bool] = RedactOpt,
    redact_report: bool = RedactReportOpt,
    no_cache: bool = NoCacheOpt,
    summary: bool = SummaryOpt,
    executor: Optional[str] = ExecutorOpt,
    ray_address: Optional[str] = RayAddressOpt,
) -> None:
    """Audit a repository: module map, findings with checked path:line evidence, ranked risks.

    Rounds stop after two rounds that add nothing new, when nothing is left to dig, or at the budget."""
    from rlm.repo.audit import AuditOptions, audit_async, audit_markdown, parse_lenses

    def opts():
        return AuditOptions(model=model, base_url=_urls(base_url), sub_model=sub_model,
                            concurrency=concurrency, redact_report=redact_report,
                            max_tokens=max_tokens, max_calls=max_calls, timeout=timeout,
                            lenses=parse_lenses(lens), max_rounds=max_rounds, dry_run=dry_run,
                            no_cache=no_cache, redact=redact, argv=_argv("audit"),
                            summary=summary, executor=executor, ray_address=ray_address)

    _run_repo(opts, lambda o, ev: audit_async(repo, o, on_event=ev, handle_sigint=True),
              audit_markdown, repo, json_out, out, quiet, html)


@app.command("mine")
def mine_cmd(
    repo: str = typer.Argument(..., help="the repository folder"),
    questions: list[str] = typer.Argument(..., help="one or more questions"),
    model: Optional[str] = ModelOpt,
    base_url: Optional[List[str]] = BaseUrlOpt,
    sub_model: Optional[str] = SubModelOpt,
    concurrency: int = ConcOpt,
    max_tokens: Optional[int] = MaxTokOpt,
    max_calls: Optional[int] = MaxCallsOpt,
    timeout: float = TimeoutOpt,
    json_out: bool = JsonOpt,
    out: Optional[Path] = OutOpt,
    html: Optional[Path] = HtmlOpt,
    dry_run: bool = DryOpt,
    quiet: bool = QuietOpt,
    redact: Optional[bool] = RedactOpt,
    redact_report: bool = RedactReportOpt,
    no_cache: bool = NoCacheOpt,
    summary: bool = SummaryOpt,
    executor: Optional[str] = ExecutorOpt,
    ray_address: Optional[str] = RayAddressOpt,
) -> None:
    """Mine requirements: facts per question, verified in code or marked inferred.

    A question without a verified fact keeps a placeholder naming it, never a guess."""
    from rlm.repo.mine import MineOptions, mine_async, mine_markdown

    def opts():
        return MineOptions(model=model, base_url=_urls(base_url), sub_model=sub_model,
                           concurrency=concurrency, redact_report=redact_report,
                           max_tokens=max_tokens, max_calls=max_calls, timeout=timeout,
                           dry_run=dry_run, no_cache=no_cache, redact=redact, argv=_argv("mine"),
                           summary=summary, executor=executor, ray_address=ray_address)

    _run_repo(opts, lambda o, ev: mine_async(repo, questions, o, on_event=ev, handle_sigint=True),
              mine_markdown, repo, json_out, out, quiet, html)


def _run_repo(make_opts, start, markdown_fn, repo: str, json_out: bool, out: Optional[Path],
              quiet: bool, html: Optional[Path] = None) -> None:
    """audit and mine alike: options built inside the one-line error guard (a bad --lens is a
    usage error), progress on a terminal, then the report delivered."""
    from rlm.render.progress import Progress

    def go():
        import anyio

        o = make_opts()
        prog = Progress(enabled=not quiet and sys.stderr.isatty())
        with prog:
            return anyio.run(lambda: start(o, prog.event))

    _emit_repo(_run(go), markdown_fn, repo, json_out, out, html)
