"""The other commands: --version, `rlm models`, `rlm config`, `rlm fixture`, `rlm mcp`,
`rlm calibrate`."""

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
    NoCacheOpt, _emit, _argv, _emit_repo, exit_code,
)


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
def config_set(key: str = typer.Argument(..., help="model | base_url | redact"),
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


@fixture_app.command("links")
def fixture_links(path: Path) -> None:
    """A small repository whose names collide on purpose, with every true test -> definition link."""
    from rlm.fixtures.links import write_links_repo

    key = _run(lambda: write_links_repo(path))
    err.print(f"wrote {path}/ and {key}")


# ------------------------------------------------------------------ repository recipes (audit, mine)


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


def _parse_levels(levels: Optional[str], quick: bool) -> list[float]:
    from rlm import calibrate as cal

    if not levels:
        return list(cal.QUICK_LEVELS if quick else cal.DEFAULT_LEVELS)
    try:
        out = [float(x) for x in levels.split(",") if x.strip()]
    except ValueError:
        _fail(f"--levels: expected comma-separated numbers in (0, 1], got {levels!r}", EXIT_USAGE)
    if not out or any(not 0 < x <= 1 for x in out):
        _fail(f"--levels: every level must be in (0, 1], got {levels!r}", EXIT_USAGE)
    return out


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

    lv = _parse_levels(levels, quick)
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
