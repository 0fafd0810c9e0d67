"""The `rlm` command line: parsing and rendering only; the work happens in rlm.api.

Exit codes: 0 complete; 3 answered with incomplete coverage; 2 bad usage or input; 1 internal.
Errors are one line on stderr, never a traceback (set RLM_DEBUG=1 to see one).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import List, Optional

import orjson
import typer
from rich.console import Console

from rlm.errors import RlmError
from rlm.run.ledger import exit_code

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Answer questions about corpora far larger than a model's context window, "
                       "with honest coverage.")
fixture_app = typer.Typer(no_args_is_help=True, help="Write deterministic corpora with answer keys.")
app.add_typer(fixture_app, name="fixture")
config_app = typer.Typer(no_args_is_help=True, help="The user config file: which model to use.")
app.add_typer(config_app, name="config")


def _version(value: bool) -> None:
    if value:
        from rlm.models.discover import version_line

        Console(highlight=False, soft_wrap=True).print(version_line(), markup=False)
        raise typer.Exit(0)


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="the version and the model a run would use")) -> None:
    """Answer questions about corpora far larger than a model's context window."""


@app.command("models")
def models_cmd(json_out: bool = typer.Option(False, "--json", help="print JSON on stdout")) -> None:
    """What is configured, whether the local extra is installed, which local servers answer
    (listed only: nothing is sent to them)."""
    from rlm.models import discover

    def go():
        servers = discover.local_servers()
        if json_out:
            from dataclasses import asdict

            from rlm.models.registry import choose, local_extra_installed

            ch = choose()
            return orjson.dumps({"would_use": discover.choice_line(ch), "spec": ch.spec,
                                 "source": ch.source, "local_extra": local_extra_installed(),
                                 "servers": [asdict(s) for s in servers]},
                                option=orjson.OPT_INDENT_2).decode()
        return discover.models_text(servers)

    Console(highlight=False, soft_wrap=True).print(_run(go), markup=False)


@config_app.command("set")
def config_set(key: str = typer.Argument(..., help="model | base_url | sub_model"),
               value: str = typer.Argument(...)) -> None:
    """Save a setting (e.g. `rlm config set model none`)."""
    from rlm.models import config

    p = _run(lambda: config.set_value(key, value))
    err.print(f"{key} = {value} (in {p})", markup=False, highlight=False)


@config_app.command("unset")
def config_unset(key: str = typer.Argument(...)) -> None:
    """Remove a setting."""
    from rlm.models import config

    _run(lambda: config.unset(key))


@config_app.command("show")
def config_show() -> None:
    """The saved settings and the model a run would use."""
    from rlm.models import config, discover, registry

    def go():
        cfg = config.load()
        rows = [f"{k} = {v}" for k, v in sorted(cfg.items())] or ["(no settings)"]
        return "\n".join([f"# {config.config_path()}", *rows,
                          f"would use: {discover.choice_line(registry.choose())}"])

    Console(highlight=False, soft_wrap=True).print(_run(go), markup=False)

err = Console(stderr=True, highlight=False)

EXIT_OK, EXIT_INTERNAL, EXIT_USAGE, EXIT_INCOMPLETE = 0, 1, 2, 3


def _fail(msg: str, code: int) -> None:
    from rich.markup import escape  # a message may hold [brackets]: rlm[local], [auth]

    err.print(f"[bold red]rlm:[/] {escape(msg)}", soft_wrap=True)
    raise typer.Exit(code)


def _run(fn):
    """Turn every failure into one line and an exit code."""
    try:
        return fn()
    except typer.Exit:
        raise
    except RlmError as e:
        _fail(str(e), e.exit_code)
    except BaseExceptionGroup as eg:  # task groups wrap errors; report the first of ours
        leaf = _first_leaf(eg)
        if isinstance(leaf, RlmError):
            _fail(str(leaf), leaf.exit_code)
        if isinstance(leaf, KeyboardInterrupt):
            _fail("interrupted", EXIT_INCOMPLETE)
        if os.environ.get("RLM_DEBUG"):
            raise
        _fail(f"internal error: {type(leaf).__name__}: {leaf} (RLM_DEBUG=1 shows the traceback)",
              EXIT_INTERNAL)
    except KeyboardInterrupt:
        _fail("interrupted", EXIT_INCOMPLETE)
    except OSError as e:  # a path we were told to write or read
        _fail(f"{e.filename or ''}: {e.strerror or e}".lstrip(": "), EXIT_USAGE)
    except Exception as e:  # noqa: BLE001 - last resort: still one line
        if os.environ.get("RLM_DEBUG"):
            raise
        _fail(f"internal error: {type(e).__name__}: {e} (RLM_DEBUG=1 shows the traceback)",
              EXIT_INTERNAL)


def _first_leaf(eg: BaseExceptionGroup) -> BaseException:
    for e in eg.exceptions:
        if isinstance(e, BaseExceptionGroup):
            return _first_leaf(e)
        return e
    return eg


# Options shared by ask/audit/mine.
ModelOpt = typer.Option(None, "--model", "-m", help="none | local | openai:NAME | NAME (with "
                        "--base-url). Env RLM_MODEL, then `rlm config set model`. Default: none "
                        "(code finds and writes the answer).")
BaseUrlOpt = typer.Option(None, "--base-url", help="OpenAI-compatible server, e.g. "
                          "http://127.0.0.1:8080/v1 (vLLM, llama.cpp, Ollama); repeat it or give a "
                          "comma list for replicas of one model. Env RLM_BASE_URL.")


def _urls(values: Optional[List[str]]) -> Optional[str]:
    """Repeated --base-url values as one comma list (split again by the model registry)."""
    return ",".join(values) if values else None
ConcOpt = typer.Option(4, "--concurrency", "-c", min=1, max=512, help="sub-calls in flight")
MaxTokOpt = typer.Option(None, "--max-tokens", min=1, help="token budget for the whole run")
MaxCallsOpt = typer.Option(None, "--max-calls", min=1, help="call budget for the whole run")
TimeoutOpt = typer.Option(120.0, "--timeout", min=0.1, help="seconds per model request")
JsonOpt = typer.Option(False, "--json", help="print the JSON report on stdout")
OutOpt = typer.Option(None, "--out", "-o", help="also write the Markdown report to FILE")
DryOpt = typer.Option(False, "--dry-run", help="probe, gate and estimate; no model call")
QuietOpt = typer.Option(False, "--quiet", "-q", help="no progress on stderr")
YesOpt = typer.Option(False, "--yes", "-y", help="do not ask before a long run (over 200 calls "
                      "or 10 minutes by the estimate); the warning is still printed")
RedactOpt = typer.Option(None, "--redact/--no-redact", help="replace secrets and personal data in "
                         "every prompt by placeholders (default: on unless every model endpoint "
                         "is on loopback or in-process; RLM_REDACT, config key redact)")
RedactReportOpt = typer.Option(False, "--redact-report", help="also mask the local report, the run "
                               "record and the call cache (implies --redact)")
NoCacheOpt = typer.Option(False, "--no-cache", help="make fresh model calls instead of answering "
                          "from the call cache (answers are still stored, so --resume works)")


@app.command()
def ask(
    path: str = typer.Argument(..., help="a file, a folder, or - for stdin (.gz is read decompressed)"),
    question: str = typer.Argument(..., help="the question"),
    model: Optional[str] = ModelOpt,
    base_url: Optional[List[str]] = BaseUrlOpt,
    sub_model: Optional[str] = typer.Option(None, "--sub-model", help="model for the fan-out's "
                                            "sub-calls (same server); --model synthesises"),
    concurrency: int = ConcOpt,
    max_tokens: Optional[int] = MaxTokOpt,
    max_calls: Optional[int] = MaxCallsOpt,
    timeout: float = TimeoutOpt,
    strategy: Optional[str] = typer.Option(None, "--strategy", help="force direct|grep|profile|fanout"),
    json_out: bool = JsonOpt,
    out: Optional[Path] = OutOpt,
    dry_run: bool = DryOpt,
    quiet: bool = QuietOpt,
    no_cache: bool = NoCacheOpt,
    resume: Optional[str] = typer.Option(None, "--resume", metavar="RUN", help="reuse the answered "
                                         "calls of run RUN (id, unique prefix, or 'last'): only its "
                                         "failed or unfinished chunks call the model"),
    redact: Optional[bool] = RedactOpt,
    redact_report: bool = RedactReportOpt,
    yes: bool = YesOpt,
) -> None:
    """Ask a question about a big file or folder."""
    from rlm.api import AskOptions, ask_async
    from rlm.render.progress import Progress, confirm_long_run

    opts = AskOptions(model=model, base_url=_urls(base_url), sub_model=sub_model, concurrency=concurrency,
                      max_tokens=max_tokens, max_calls=max_calls, timeout=timeout,
                      strategy=strategy, dry_run=dry_run, no_cache=no_cache, resume=resume,
                      argv=_argv(path, question), redact=redact, redact_report=redact_report)

    def go():
        import anyio

        prog = Progress(enabled=not quiet and sys.stderr.isatty())
        opts.confirm = confirm_long_run(prog, yes)
        with prog:
            return anyio.run(lambda: ask_async(path, question, opts, on_event=prog.event,
                                               handle_sigint=True))

    report = _run(go)
    _emit(report, json_out, out, quiet)


def _emit(report, json_out: bool, out: Optional[Path], quiet: bool) -> None:
    from rlm.render import report_markdown

    md = report_markdown(report)
    if out:
        try:
            out.write_text(md, encoding="utf-8")
        except OSError as e:
            _fail(f"cannot write {out}: {e.strerror}", EXIT_USAGE)
    if json_out:
        sys.stdout.buffer.write(orjson.dumps(report.model_dump(mode="json"),
                                             option=orjson.OPT_INDENT_2) + b"\n")
    else:
        from rlm.render.terminal import print_markdown

        print_markdown(md)  # rich on a terminal, plain Markdown when piped
    raise typer.Exit(exit_code(report.coverage, report.dry_run))


# ------------------------------------------------------------------ run history (rlm/store.py)

def _argv(*must: str) -> list[str] | None:
    """This command line for the run record (store.py redacts secrets), when sys.argv is really
    it (not so when the app is invoked in-process, e.g. by a test runner)."""
    args = sys.argv[1:]
    return args if all(m in args for m in must) else None


def _runs_store():
    from rlm.store import RunStore

    return RunStore()


def _when(ts: float | None) -> str:
    import datetime as _dt

    return _dt.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M:%S") if ts else ""


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
             json_out: bool = typer.Option(False, "--json", help="print the JSON report")) -> None:
    """Print a recorded run's report (Markdown, or --json)."""
    from rlm.render import report_markdown
    from rlm.schemas import Report

    def load():
        s = _runs_store()
        return s.get(s.resolve(run))

    r = _run(load)
    rep = r.get("report")
    if json_out:
        out = rep if rep is not None else {**_run_summary(r), "report": None}
        sys.stdout.buffer.write(orjson.dumps(out, option=orjson.OPT_INDENT_2) + b"\n")
        return
    if rep is not None:
        try:
            if rep.get("command") in ("audit", "mine"):
                from rlm.repo import record

                md = record.report_markdown(record.load_report(rep))
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
    quiet: bool = QuietOpt,
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
                                        "concurrency": concurrency, "timeout": timeout},
                            json_out, out, quiet)
    if o.get("command", "ask") != "ask":
        _fail(f"run {rid} is a `{o.get('command')}` run, which cannot be resumed", EXIT_USAGE)
    path = o.get("path_abs") or r.get("corpus")
    if path != "-" and not Path(path).exists():
        _fail(f"run {rid} read {path}, which no longer exists", EXIT_USAGE)
    if path == "-":
        _fail(f"run {rid} read stdin; resume it with `rlm ask - QUESTION --resume {rid}`", EXIT_USAGE)
    names = {f.name for f in fields(AskOptions)}
    kw = {k: v for k, v in o.items() if k in names and k not in ("api_key", "resume", "argv")}
    for k, v in (("model", model), ("base_url", base_url), ("concurrency", concurrency),
                 ("timeout", timeout)):
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
    _emit(report, json_out, out, quiet)


def _resume_repo(rid: str, r: dict, o: dict, overrides: dict, json_out: bool,
                 out: Optional[Path], quiet: bool) -> None:
    """`rlm resume` of an audit or mine: answered calls come from the cache."""
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
    _emit_repo(report, record.report_markdown, repo, json_out, out)


@fixture_app.command("log")
def fixture_log(path: Path, lines: int = typer.Option(600_000, "--lines", min=12),
                seed: int = typer.Option(7, "--seed")) -> None:
    """A synthetic service log with 12 planted needles; answer key in PATH.truth.json."""
    from rlm.fixtures.log import write_log

    key = _run(lambda: (path.parent.mkdir(parents=True, exist_ok=True),
                        write_log(path, lines=lines, seed=seed))[1])
    err.print(f"wrote {path} ({key['lines']:,} lines, {key['bytes']:,} bytes) and "
              f"{path}.truth.json ({len(key['needles'])} needles)")


@fixture_app.command("transcript")
def fixture_transcript(path: Path, lines: int = typer.Option(400_000, "--lines", min=60),
                       seed: int = typer.Option(7, "--seed")) -> None:
    """A long meeting transcript with a planted story, revised values and distractors."""
    from rlm.fixtures.transcript import write_transcript

    key = _run(lambda: (path.parent.mkdir(parents=True, exist_ok=True),
                        write_transcript(path, lines=lines, seed=seed))[1])
    err.print(f"wrote {path} ({key['lines']:,} lines) and {path}.truth.json")


@fixture_app.command("repo")
def fixture_repo(path: Path, seed: int = typer.Option(7, "--seed")) -> None:
    """A small synthetic repository with code-only facts and false doc claims."""
    from rlm.fixtures.repo import write_repo

    key = _run(lambda: write_repo(path, seed=seed))
    err.print(f"wrote {path}/ ({len(key.get('facts', []))} planted facts) and "
              f"{str(path).rstrip('/')}.truth.json")


# ------------------------------------------------------------------ repository recipes (audit, mine)

def _emit_repo(report, markdown_fn, repo: str, json_out: bool, out: Optional[Path]) -> None:
    """Write/print an audit or mine report; exit 0 complete, 3 incomplete (dry run: 0)."""
    if out:
        import os.path

        base = os.path.relpath(os.path.abspath(repo), os.path.abspath(out.parent or Path(".")))
        try:
            out.write_text(markdown_fn(report, base), encoding="utf-8")
        except OSError as e:
            _fail(f"cannot write {out}: {e.strerror}", EXIT_USAGE)
    if json_out:
        sys.stdout.buffer.write(orjson.dumps(report.model_dump(mode="json"),
                                             option=orjson.OPT_INDENT_2) + b"\n")
    else:
        from rlm.render.terminal import print_markdown

        print_markdown(markdown_fn(report, repo))  # rich on a terminal, plain when piped
    raise typer.Exit(exit_code(report.coverage, report.dry_run))


@app.command("audit")
def audit_cmd(
    repo: str = typer.Argument(..., help="the repository folder"),
    lens: Optional[str] = typer.Option(None, "--lens", help="comma-separated lenses to dig with: "
                                       "structure,risks,tests (default: all three)"),
    max_rounds: int = typer.Option(6, "--max-rounds", min=1, max=50, help="at most this many rounds"),
    model: Optional[str] = ModelOpt,
    base_url: Optional[List[str]] = BaseUrlOpt,
    concurrency: int = ConcOpt,
    max_tokens: Optional[int] = MaxTokOpt,
    max_calls: Optional[int] = MaxCallsOpt,
    timeout: float = TimeoutOpt,
    json_out: bool = JsonOpt,
    out: Optional[Path] = OutOpt,
    dry_run: bool = DryOpt,
    quiet: bool = QuietOpt,
    redact: Optional[bool] = RedactOpt,
    no_cache: bool = NoCacheOpt,
) -> None:
    """Audit a repository: module map, findings with checked path:line evidence, ranked risks.

    Rounds stop after two rounds that add nothing new, when nothing is left to dig, or at the budget."""
    from rlm.audit import AuditOptions, audit_async, audit_markdown, parse_lenses
    from rlm.render.progress import Progress

    def go():
        import anyio

        opts = AuditOptions(model=model, base_url=_urls(base_url), concurrency=concurrency,
                            max_tokens=max_tokens, max_calls=max_calls, timeout=timeout,
                            lenses=parse_lenses(lens), max_rounds=max_rounds, dry_run=dry_run,
                            no_cache=no_cache, redact=redact, argv=_argv("audit"))
        prog = Progress(enabled=not quiet and sys.stderr.isatty())
        with prog:
            return anyio.run(lambda: audit_async(repo, opts, on_event=prog.event,
                                                 handle_sigint=True))

    report = _run(go)
    _emit_repo(report, audit_markdown, repo, json_out, out)


@app.command("mine")
def mine_cmd(
    repo: str = typer.Argument(..., help="the repository folder"),
    questions: list[str] = typer.Argument(..., help="one or more questions"),
    model: Optional[str] = ModelOpt,
    base_url: Optional[List[str]] = BaseUrlOpt,
    concurrency: int = ConcOpt,
    max_tokens: Optional[int] = MaxTokOpt,
    max_calls: Optional[int] = MaxCallsOpt,
    timeout: float = TimeoutOpt,
    json_out: bool = JsonOpt,
    out: Optional[Path] = OutOpt,
    dry_run: bool = DryOpt,
    quiet: bool = QuietOpt,
    redact: Optional[bool] = RedactOpt,
    no_cache: bool = NoCacheOpt,
) -> None:
    """Mine requirements: facts per question, verified in code or marked inferred.

    A question without a verified fact keeps a placeholder naming it, never a guess."""
    from rlm.mine import MineOptions, mine_async, mine_markdown
    from rlm.render.progress import Progress

    def go():
        import anyio

        opts = MineOptions(model=model, base_url=_urls(base_url), concurrency=concurrency,
                           max_tokens=max_tokens, max_calls=max_calls, timeout=timeout,
                           dry_run=dry_run, no_cache=no_cache, redact=redact, argv=_argv("mine"))
        prog = Progress(enabled=not quiet and sys.stderr.isatty())
        with prog:
            return anyio.run(lambda: mine_async(repo, questions, opts, on_event=prog.event,
                                                handle_sigint=True))

    report = _run(go)
    _emit_repo(report, mine_markdown, repo, json_out, out)


@app.command("mcp")
def mcp_cmd(
    root: Optional[list[str]] = typer.Option(None, "--root", help="a folder the server may read "
                                             "(repeatable; default: the current directory)"),
    http: Optional[str] = typer.Option(None, "--http", metavar="HOST:PORT", help="serve streamable "
                                       "HTTP on HOST:PORT instead of stdio"),
    model: Optional[str] = typer.Option(None, "--model", "-m", help="as for ask; 'sampling' sends "
                                        "sub-calls to the MCP client's own model"),
    base_url: Optional[List[str]] = BaseUrlOpt,
    sub_model: Optional[str] = typer.Option(None, "--sub-model", help="model for sub-calls"),
    concurrency: int = ConcOpt,
    max_tokens: Optional[int] = typer.Option(None, "--max-tokens", min=1, help="default token "
                                             "budget of one tool call"),
    max_calls: Optional[int] = typer.Option(None, "--max-calls", min=1, help="default call "
                                            "budget of one tool call"),
    timeout: float = TimeoutOpt,
    sampling_context: int = typer.Option(32_000, "--sampling-context", min=1024, help="context "
                                         "window (tokens) assumed for the client's model"),
) -> None:
    """Serve rlm's tools to coding agents over the Model Context Protocol (stdio, or --http)."""
    from rlm.mcp.config import ServerConfig
    from rlm.mcp.roots import Roots
    from rlm.mcp.server import parse_http, serve

    cfg = ServerConfig(roots=list(root or []), model=model, base_url=_urls(base_url),
                       sub_model=sub_model,
                       concurrency=concurrency, max_tokens=max_tokens, max_calls=max_calls,
                       timeout=timeout, sampling_context=sampling_context, http=http)
    _run(lambda: (Roots(cfg.roots), http and parse_http(http)))  # bad input: one line, exit 2
    _run(lambda: serve(cfg))


@app.command("calibrate")
def calibrate_cmd(
    model: Optional[str] = ModelOpt,
    base_url: Optional[List[str]] = BaseUrlOpt,
    levels: Optional[str] = typer.Option(None, "--levels", help="fill levels as shares of the "
                                         "context, comma-separated (default 0.1,0.25,...,0.97)"),
    reps: Optional[int] = typer.Option(None, "--reps", min=1, help="repetitions per level and task "
                                       "(default 3; 1 with --quick)"),
    quick: bool = typer.Option(False, "--quick", help="4 levels, 1 repetition: a rough curve fast"),
    plot: Optional[Path] = typer.Option(None, "--plot", help="also draw the curve as an SVG file "
                                        "(PATH ending in .svg)"),
    concurrency: int = ConcOpt,
    timeout: float = TimeoutOpt,
    json_out: bool = typer.Option(False, "--json", help="print the profile JSON on stdout"),
    no_save: bool = typer.Option(False, "--no-save", help="measure only; do not write the profile"),
) -> None:
    """Measure accuracy as the prompt fills (needle and 3-fact synthesis); save a model profile.

    The usable window (80% of the synthesis breakpoint) is then used by the gate and chunker."""
    from rlm import calibrate as cal
    from rlm.models.registry import resolve_model

    def parse_levels():
        if not levels:
            return list(cal.QUICK_LEVELS if quick else cal.DEFAULT_LEVELS)
        try:
            out = [float(x) for x in levels.split(",") if x.strip()]
        except ValueError:
            _fail(f"--levels: expected comma-separated numbers in (0, 1], got {levels!r}", EXIT_USAGE)
        if not out or any(not 0 < x <= 1 for x in out):
            _fail(f"--levels: every level must be in (0, 1], got {levels!r}", EXIT_USAGE)
        return out

    lv = parse_levels()
    n_reps = reps or (1 if quick else cal.DEFAULT_REPS)
    if plot and plot.suffix.lower() != ".svg":
        _fail(f"--plot writes SVG: give a path ending in .svg, got {str(plot)!r}", EXIT_USAGE)

    def go():
        m = resolve_model(model, _urls(base_url), timeout=timeout)
        err.print(f"calibrating {m.name} (context {m.context_tokens:,} tokens): "
                  f"{len(lv)} levels x 2 tasks x {n_reps} repetition(s) = {len(lv) * 2 * n_reps} calls")
        done = [0]

        def tick(tr):
            done[0] += 1
            if sys.stderr.isatty():
                err.print(f"  {done[0]}/{len(lv) * 2 * n_reps} {tr.task} at {tr.level:.0%}: "
                          f"{'ok' if tr.correct else 'wrong' if not tr.error else tr.error[:60]}")

        async def measure():
            try:
                return await cal.run_calibration(m, lv, n_reps, timeout=timeout,
                                                 concurrency=concurrency, on_trial=tick)
            finally:
                await m.aclose()

        import anyio

        prof = anyio.run(measure)
        if not no_save:
            try:
                prof["_path"] = str(cal.save_profile(prof))
            except OSError as e:
                from rlm.errors import UsageError

                raise UsageError(f"cannot write the profile to {cal.profile_path(m.name)}: "
                                 f"{e.strerror or e}") from None
        return prof

    prof = _run(go)
    if plot:
        try:
            cal.plot_profile(prof, plot)
        except OSError as e:
            _fail(f"cannot write {plot}: {e.strerror}", EXIT_USAGE)
    if json_out:
        sys.stdout.buffer.write(orjson.dumps({k: v for k, v in prof.items() if k != "_path"},
                                             option=orjson.OPT_INDENT_2) + b"\n")
        return
    lines = [cal.curve_table(prof), "", *cal.summary_lines(prof)]
    lines.append(f"profile written to {prof['_path']}" if prof.get("_path") else
                 "profile not saved (--no-save)")
    if plot:
        lines.append(f"plot written to {plot}")
    Console(highlight=False, soft_wrap=True).print("\n".join(lines), markup=False)


def main() -> None:
    from rlm.cli_help import readable_help

    readable_help()
    if not sys.argv[1:]:  # bare `rlm`: the help, and that is not an error
        app(["--help"], prog_name="rlm")
    app(prog_name="rlm")


if __name__ == "__main__":
    main()
