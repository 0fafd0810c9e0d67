"""What every `rlm` command shares: the typer app, the shared options (the same flags mean
the same on ask, audit and mine), one-line errors with exit codes, and the output of a
report (JSON on stdout, Markdown on the terminal or to --out, exit 0 or 3).

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

from rlm.errors import EXIT_INCOMPLETE, EXIT_INTERNAL, EXIT_OK, EXIT_USAGE, RlmError  # noqa: F401

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Answer questions about corpora far larger than a model's context window, "
                       "with honest coverage.")
fixture_app = typer.Typer(no_args_is_help=True, help="Write deterministic corpora with answer keys.")
app.add_typer(fixture_app, name="fixture")
config_app = typer.Typer(no_args_is_help=True, help="The user config file: which model to use.")
app.add_typer(config_app, name="config")


err = Console(stderr=True, highlight=False)



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
SubModelOpt = typer.Option(None, "--sub-model", help="model for the sub-calls (map, judge, merge, "
                          "repository jobs; same server); --model synthesises")
ConcOpt = typer.Option(4, "--concurrency", "-c", min=1, max=512, help="sub-calls in flight")
MaxTokOpt = typer.Option(None, "--max-tokens", min=1, help="token budget for the whole run")
MaxCallsOpt = typer.Option(None, "--max-calls", min=1, help="call budget for the whole run")
TimeoutOpt = typer.Option(120.0, "--timeout", min=0.1, help="seconds per model request")
JsonOpt = typer.Option(False, "--json", help="print the JSON report on stdout")
OutOpt = typer.Option(None, "--out", "-o", help="also write the Markdown report to FILE")
HtmlOpt = typer.Option(None, "--html", metavar="FILE", help="also write a self-contained HTML "
                       "report to FILE (timeline, coverage map, findings; no network needed)")
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
ExecutorOpt = typer.Option(None, "--executor", help="where scans and sub-calls run: local (default) "
                          "| ray (the rlm[ray] extra). Env RLM_EXECUTOR, then `rlm config set "
                          "executor`.")
RayAddressOpt = typer.Option(None, "--ray-address", metavar="HOST:PORT", help="the Ray cluster to "
                             "join (with --executor ray); default RAY_ADDRESS, else a local Ray "
                             "instance is started")


def _emit(report, json_out: bool, out: Optional[Path], quiet: bool,
          html: Optional[Path] = None) -> None:
    from rlm.render import report_markdown

    md = report_markdown(report)
    _deliver(report, json_out, out, md, md, html)


def write_html(report, html: Path) -> None:
    """--html: the self-contained page (rlm.render.html), or a one-line error (exit 2)."""
    from rlm.render.html import write_html as write

    try:
        write(report, html)
    except OSError as e:
        _fail(f"cannot write {html}: {e.strerror}", EXIT_USAGE)


def _deliver(report, json_out: bool, out: Optional[Path], file_md: Optional[str],
             screen_md: Optional[str], html: Optional[Path] = None) -> None:
    """--out gets the Markdown, --html the page, stdout the JSON report or the Markdown (rich
    on a terminal, plain when piped); exit 0 complete, 3 incomplete (dry run: 0). Shared by
    every command."""
    if out:
        try:
            out.write_text(file_md or "", encoding="utf-8")
        except OSError as e:
            _fail(f"cannot write {out}: {e.strerror}", EXIT_USAGE)
    if html:
        write_html(report, html)
    if json_out:
        sys.stdout.buffer.write(orjson.dumps(report.model_dump(mode="json"),
                                             option=orjson.OPT_INDENT_2) + b"\n")
    else:
        from rlm.render.terminal import print_markdown

        print_markdown(screen_md or "")
    raise typer.Exit(exit_code(report.coverage, report.dry_run))


def exit_code(coverage, dry_run: bool = False) -> int:
    """0 complete (or a dry run), 3 incomplete: rlm.engine.ledger's rule, imported when a
    report is delivered (the engine is not loaded for --help)."""
    from rlm.engine.ledger import exit_code as of_coverage

    return of_coverage(coverage, dry_run)


# ------------------------------------------------------------------ run history (rlm/store.py)

def _argv(*must: str) -> list[str] | None:
    """This command line for the run record (store.py redacts secrets), when sys.argv is really
    it (not so when the app is invoked in-process, e.g. by a test runner)."""
    args = sys.argv[1:]
    return args if all(m in args for m in must) else None


def _emit_repo(report, markdown_fn, repo: str, json_out: bool, out: Optional[Path],
               html: Optional[Path] = None) -> None:
    """An audit or mine report: links in the --out file are relative to where it is written."""
    file_md = None
    if out:
        import os.path

        base = os.path.relpath(os.path.abspath(repo), os.path.abspath(out.parent or Path(".")))
        file_md = markdown_fn(report, base)
    _deliver(report, json_out, out, file_md, None if json_out else markdown_fn(report, repo),
             html)
