"""`rlm ask PATH QUESTION`: the options and the rendering of ask; the work is rlm.api."""

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


@app.command()
def ask(
    path: str = typer.Argument(..., help="a file, a folder, or - for stdin (.gz is read decompressed)"),
    question: str = typer.Argument(..., help="the question"),
    model: Optional[str] = ModelOpt,
    base_url: Optional[List[str]] = BaseUrlOpt,
    sub_model: Optional[str] = SubModelOpt,
    concurrency: int = ConcOpt,
    max_tokens: Optional[int] = MaxTokOpt,
    max_calls: Optional[int] = MaxCallsOpt,
    timeout: float = TimeoutOpt,
    strategy: Optional[str] = typer.Option(None, "--strategy", help="force direct|grep|profile|fanout"),
    json_out: bool = JsonOpt,
    out: Optional[Path] = OutOpt,
    html: Optional[Path] = HtmlOpt,
    dry_run: bool = DryOpt,
    quiet: bool = QuietOpt,
    no_cache: bool = NoCacheOpt,
    resume: Optional[str] = typer.Option(None, "--resume", metavar="RUN", help="reuse the answered "
                                         "calls of run RUN (id, unique prefix, or 'last'): only its "
                                         "failed or unfinished chunks call the model"),
    redact: Optional[bool] = RedactOpt,
    redact_report: bool = RedactReportOpt,
    yes: bool = YesOpt,
    executor: Optional[str] = ExecutorOpt,
    ray_address: Optional[str] = RayAddressOpt,
) -> None:
    """Ask a question about a big file or folder."""
    from rlm.api import AskOptions, ask_async
    from rlm.render.progress import Progress, confirm_long_run

    opts = AskOptions(model=model, base_url=_urls(base_url), sub_model=sub_model, concurrency=concurrency,
                      max_tokens=max_tokens, max_calls=max_calls, timeout=timeout,
                      strategy=strategy, dry_run=dry_run, no_cache=no_cache, resume=resume,
                      argv=_argv(path, question), redact=redact, redact_report=redact_report,
                      executor=executor, ray_address=ray_address)

    def go():
        import anyio

        prog = Progress(enabled=not quiet and sys.stderr.isatty())
        opts.confirm = confirm_long_run(prog, yes)
        with prog:
            return anyio.run(lambda: ask_async(path, question, opts, on_event=prog.event,
                                               handle_sigint=True))

    report = _run(go)
    _emit(report, json_out, out, quiet, html)
