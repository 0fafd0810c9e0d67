"""`rlm runs`, `rlm show`, `rlm resume`: the run history (rlm.store) as tables and reports."""

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
    TimeoutOpt, JsonOpt, OutOpt, DryOpt, QuietOpt, YesOpt, RedactOpt, RedactReportOpt,
    NoCacheOpt, _emit, _argv, _emit_repo, exit_code, HtmlOpt, ExecutorOpt, RayAddressOpt,
)


def _runs_store():
    from rlm.store.runs import run_history  # here: --help loads no database code

    return run_history()


def _when(ts: float | None) -> str:
    from rlm.store.runs import when

    return when(ts)


def _coverage_cell(r: dict) -> str:
    ok, total, failed = r.get("chunks_ok") or 0, r.get("chunks_total"), r.get("chunks_failed") or 0
    frac = f"{ok}/{total if total is not None else '?'}"
    st = r["status"]
    if st == "done":
        return f"complete {frac}"
    if st == "incomplete":
        return f"INCOMPLETE {frac}" + (f" ({failed} failed)" if failed else "")
    if st == "error":
        return f"error: {(r.get('error') or '')[:40]}"
    return f"{st} {frac}" + (f" ({failed} failed)" if failed else "")


def _run_summary(r: dict) -> dict:
    keys = ("id", "command", "argv", "corpus", "question", "strategy", "status", "complete",
            "chunks_total", "chunks_ok", "chunks_failed", "tokens", "calls", "cached_calls",
            "resumed_from", "error")
    d = {k: r.get(k) for k in keys}
    d["created"] = _when(r.get("created"))
    d["finished"] = _when(r.get("finished")) or None
    return d


@app.command("runs")
def runs_cmd(limit: int = typer.Option(20, "--limit", "-n", min=1, help="how many recent runs"),
             json_out: bool = typer.Option(False, "--json", help="print JSON on stdout")) -> None:
    """List recent runs: id, date, command, corpus, strategy, coverage, tokens."""
    rows = _run(lambda: _runs_store().list(limit))
    if json_out:
        sys.stdout.buffer.write(orjson.dumps([_run_summary(r) for r in rows],
                                             option=orjson.OPT_INDENT_2) + b"\n")
        return
    from rich.table import Table

    t = Table(box=None, header_style="bold", pad_edge=False)
    for col, kw in (("id", {"no_wrap": True}), ("date", {"no_wrap": True}),
                    ("command", {"no_wrap": True, "overflow": "ellipsis", "max_width": 50}),
                    ("corpus", {"no_wrap": True, "overflow": "ellipsis", "max_width": 30}),
                    ("strategy", {"no_wrap": True}), ("coverage", {"no_wrap": True}),
                    ("tokens", {"justify": "right", "no_wrap": True})):
        t.add_column(col, **kw)
    for r in rows:
        argv = r.get("argv") or []
        verb = (" ".join(argv[:1] + (argv[1:2] if argv[:1] == ["resume"] else []))
                if argv else (r.get("options") or {}).get("command") or "ask")
        t.add_row(r["id"], _when(r["created"])[:16], f"{verb} {r['question']!r}", r["corpus"] or "",
                  r["strategy"] or "", _coverage_cell(r),
                  "" if r.get("tokens") is None else f"{r['tokens']:,}"
                  + (f" (+{r['cached_calls']} cached)" if r.get("cached_calls") else ""))
    if not rows:
        err.print("no recorded runs yet")
        return
    Console(highlight=False, width=None if sys.stdout.isatty() else 200).print(t)


@app.command("show")
def show_cmd(run: str = typer.Argument(..., help="run id, unique prefix, or 'last'"),
             json_out: bool = typer.Option(False, "--json", help="print the JSON report"),
             html: Optional[Path] = HtmlOpt) -> None:
    """Print a recorded run's report (Markdown, or --json); --html FILE also draws it as a page."""
    from rlm.render import repo_markdown, report_markdown
    from rlm.schemas.report import Report

    def load():
        s = _runs_store()
        return s.get(s.resolve(run))

    r = _run(load)
    rep = r.get("report")
    if html is not None:
        if rep is None:
            _fail(f"run {r['id']} has no report to draw (status {r['status']})", EXIT_USAGE)
        from rlm.cli.base import write_html

        _run(lambda: write_html(rep, html))
    if json_out:
        out = rep if rep is not None else {**_run_summary(r), "report": None}
        sys.stdout.buffer.write(orjson.dumps(out, option=orjson.OPT_INDENT_2) + b"\n")
        return
    if rep is not None:
        try:
            if rep.get("command") in ("audit", "mine"):
                from rlm.repo import record

                md = repo_markdown(record.load_report(rep))
            else:
                md = report_markdown(Report.model_validate(rep))
        except Exception:  # noqa: BLE001 - a report recorded by another version of rlm
            md = (f"# {rep.get('command')}: {rep.get('question')}\n\n{rep.get('answer', '')}\n\n"
                  f"Run: {r['id']} (recorded by another version; --json shows all of it).")
        from rlm.render.terminal import print_markdown

        print_markdown(md)
        return
    total = r.get("chunks_total") if r.get("chunks_total") is not None else "?"
    lines = [(f"Run {r['id']} ({r['command']}) has no report: status {r['status']}, "
              f"{r.get('chunks_ok') or 0} chunk(s) answered and {r.get('chunks_failed') or 0} "
              f"failed of {total}.")]
    if r.get("error"):
        lines.append(f"Error: {r['error']}")
    if r["status"] in ("died", "error", "interrupted"):
        lines.append(f"Resume it with: rlm resume {r['id']}")
    Console(highlight=False, soft_wrap=True).print("\n".join(lines), markup=False)


@app.command("resume")
def resume_cmd(
    run: str = typer.Argument(..., help="run id, unique prefix, or 'last'"),
    model: Optional[str] = typer.Option(None, "--model", "-m", help="override the recorded model"),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="override the recorded server"),
    concurrency: Optional[int] = typer.Option(None, "--concurrency", "-c", min=1, max=512),
    timeout: Optional[float] = typer.Option(None, "--timeout", min=0.1),
    json_out: bool = JsonOpt,
    out: Optional[Path] = OutOpt,
    html: Optional[Path] = HtmlOpt,
    quiet: bool = QuietOpt,
    executor: Optional[str] = ExecutorOpt,
    ray_address: Optional[str] = RayAddressOpt,
) -> None:
    """Finish a recorded ask, audit or mine; only its failed or unfinished calls call the model.

    Answered calls come from the call cache; reduce, rounds and synthesis are redone."""
    from dataclasses import fields

    from rlm.api import AskOptions, ask_async
    from rlm.render.progress import Progress

    def load():
        s = _runs_store()
        rid = s.resolve(run)
        return rid, s.get(rid)

    rid, r = _run(load)
    o = dict(r.get("options") or {})
    if o.get("command", "ask") in ("audit", "mine"):
        return _resume_repo(rid, r, o, {"model": model, "base_url": base_url,
                                        "concurrency": concurrency, "timeout": timeout,
                                        "executor": executor, "ray_address": ray_address},
                            json_out, out, quiet, html)
    if o.get("command", "ask") != "ask":
        _fail(f"run {rid} is a `{o.get('command')}` run, which cannot be resumed", EXIT_USAGE)
    path = o.get("path_abs") or r.get("corpus")
    if path != "-" and not Path(path).exists():
        _fail(f"run {rid} read {path}, which no longer exists", EXIT_USAGE)
    if path == "-":
        _fail(f"run {rid} read stdin; resume it with `rlm ask - QUESTION --resume {rid}`", EXIT_USAGE)
    from rlm.redact.record_mask import cannot_resume, masked_question

    if masked_question(r):
        _fail(cannot_resume(r, f"resume it with `rlm ask PATH QUESTION --resume {rid}`"),
              EXIT_USAGE)
    names = {f.name for f in fields(AskOptions)}
    kw = {k: v for k, v in o.items() if k in names and k not in ("api_key", "resume", "argv")}
    for k, v in (("model", model), ("base_url", base_url), ("concurrency", concurrency),
                 ("timeout", timeout), ("executor", executor), ("ray_address", ray_address)):
        if v is not None:
            kw[k] = v
    kw["dry_run"] = False
    opts = AskOptions(**kw, resume=rid, argv=_argv(run))

    def go():
        import anyio

        prog = Progress(enabled=not quiet and sys.stderr.isatty())
        with prog:
            return anyio.run(lambda: ask_async(path, r["question"], opts, on_event=prog.event,
                                               handle_sigint=True))

    report = _run(go)
    _emit(report, json_out, out, quiet, html)


def _resume_repo(rid: str, r: dict, o: dict, overrides: dict, json_out: bool,
                 out: Optional[Path], quiet: bool, html: Optional[Path] = None) -> None:
    """`rlm resume` of an audit or mine: answered calls come from the cache."""
    from rlm.render import repo_markdown
    from rlm.render.progress import Progress
    from rlm.repo import record

    repo = o.get("path_abs") or r.get("corpus") or ""
    if not Path(repo).is_dir():
        _fail(f"run {rid} read {repo}, which is no longer a folder", EXIT_USAGE)
    opts = record.resume_options(o, rid, overrides, _argv("resume"))

    def go():
        import anyio

        prog = Progress(enabled=not quiet and sys.stderr.isatty())
        with prog:
            return anyio.run(lambda: record.resume_async(o, opts, on_event=prog.event,
                                                         handle_sigint=True))

    report = _run(go)
    _emit_repo(report, repo_markdown, repo, json_out, out, html)
