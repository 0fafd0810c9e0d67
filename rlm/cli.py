"""The `rlm` command line: parsing and rendering only; the work happens in rlm.api.

Exit codes: 0 complete; 3 answered with incomplete coverage; 2 bad usage or input; 1 internal.
Errors are one line on stderr, never a traceback (set RLM_DEBUG=1 to see one).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional

import orjson
import typer
from rich.console import Console

from rlm.errors import RlmError

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Answer questions about corpora far larger than a model's context window, "
                       "with honest coverage.")
fixture_app = typer.Typer(no_args_is_help=True, help="Write deterministic corpora with answer keys.")
app.add_typer(fixture_app, name="fixture")

err = Console(stderr=True, highlight=False)

EXIT_OK, EXIT_INTERNAL, EXIT_USAGE, EXIT_INCOMPLETE = 0, 1, 2, 3


def _fail(msg: str, code: int) -> None:
    err.print(f"[bold red]rlm:[/] {msg}", soft_wrap=True)
    raise typer.Exit(code)


def _run(fn):
    """Turn every failure into one line and an exit code."""
    try:
        return fn()
    except typer.Exit:
        raise
    except RlmError as e:
        _fail(str(e), e.exit_code)
    except KeyboardInterrupt:
        _fail("interrupted", EXIT_INCOMPLETE)
    except Exception as e:  # noqa: BLE001 - last resort: still one line
        if os.environ.get("RLM_DEBUG"):
            raise
        _fail(f"internal error: {type(e).__name__}: {e} (RLM_DEBUG=1 shows the traceback)",
              EXIT_INTERNAL)


# Options shared by ask/audit/mine.
ModelOpt = typer.Option(None, "--model", "-m", help="local | openai:NAME | NAME (with --base-url). "
                        "Env RLM_MODEL. Default: the embedded local model.")
BaseUrlOpt = typer.Option(None, "--base-url", help="OpenAI-compatible server, e.g. "
                          "http://127.0.0.1:8080/v1 (vLLM, llama.cpp, Ollama). Env RLM_BASE_URL.")
ConcOpt = typer.Option(4, "--concurrency", "-c", min=1, max=512, help="sub-calls in flight")
MaxTokOpt = typer.Option(None, "--max-tokens", min=1, help="token budget for the whole run")
MaxCallsOpt = typer.Option(None, "--max-calls", min=1, help="call budget for the whole run")
TimeoutOpt = typer.Option(120.0, "--timeout", min=0.1, help="seconds per model request")
JsonOpt = typer.Option(False, "--json", help="print the JSON report on stdout")
OutOpt = typer.Option(None, "--out", "-o", help="also write the Markdown report to FILE")
DryOpt = typer.Option(False, "--dry-run", help="probe, gate and estimate; no model call")
QuietOpt = typer.Option(False, "--quiet", "-q", help="no progress on stderr")


@app.command()
def ask(
    path: str = typer.Argument(..., help="a file, a folder, or - for stdin (.gz is read decompressed)"),
    question: str = typer.Argument(..., help="the question"),
    model: Optional[str] = ModelOpt,
    base_url: Optional[str] = BaseUrlOpt,
    concurrency: int = ConcOpt,
    max_tokens: Optional[int] = MaxTokOpt,
    max_calls: Optional[int] = MaxCallsOpt,
    timeout: float = TimeoutOpt,
    strategy: Optional[str] = typer.Option(None, "--strategy", help="force direct|grep|profile|fanout"),
    json_out: bool = JsonOpt,
    out: Optional[Path] = OutOpt,
    dry_run: bool = DryOpt,
    quiet: bool = QuietOpt,
) -> None:
    """Ask a question about a big file or folder."""
    from rlm.api import AskOptions, ask_async
    from rlm.progress import Progress

    opts = AskOptions(model=model, base_url=base_url, concurrency=concurrency,
                      max_tokens=max_tokens, max_calls=max_calls, timeout=timeout,
                      strategy=strategy, dry_run=dry_run)

    def go():
        import anyio

        prog = Progress(enabled=not quiet and sys.stderr.isatty())
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
        Console(highlight=False, soft_wrap=True).print(md, markup=False)
    if report.dry_run:
        raise typer.Exit(EXIT_OK)
    raise typer.Exit(EXIT_OK if report.coverage.complete else EXIT_INCOMPLETE)


@fixture_app.command("log")
def fixture_log(path: Path, lines: int = typer.Option(600_000, "--lines", min=12),
                seed: int = typer.Option(7, "--seed")) -> None:
    """A synthetic service log with 12 planted needles; answer key in PATH.truth.json."""
    from rlm.fixtures.log import write_log

    key = _run(lambda: write_log(path, lines=lines, seed=seed))
    err.print(f"wrote {path} ({key['lines']:,} lines, {key['bytes']:,} bytes) and "
              f"{path}.truth.json ({len(key['needles'])} needles)")


@fixture_app.command("transcript")
def fixture_transcript(path: Path, lines: int = typer.Option(400_000, "--lines", min=60),
                       seed: int = typer.Option(7, "--seed")) -> None:
    """A long meeting transcript with a planted story, revised values and distractors."""
    from rlm.fixtures.transcript import write_transcript

    key = _run(lambda: write_transcript(path, lines=lines, seed=seed))
    err.print(f"wrote {path} ({key['lines']:,} lines) and {path}.truth.json")


@fixture_app.command("repo")
def fixture_repo(path: Path, seed: int = typer.Option(7, "--seed")) -> None:
    """A small synthetic repository with code-only facts and false doc claims."""
    from rlm.fixtures.repo import write_repo

    key = _run(lambda: write_repo(path, seed=seed))
    err.print(f"wrote {path}/ ({len(key.get('facts', []))} planted facts) and "
              f"{str(path).rstrip('/')}.truth.json")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
