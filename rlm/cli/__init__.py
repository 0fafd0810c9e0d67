"""The `rlm` command line: parsing options and rendering reports only; the work happens in
rlm.api (ask), rlm.repo.audit and rlm.repo.mine. One module per group of commands:

- base: the app, shared options, one-line errors and exit codes, report output
- ask: `rlm ask`; repo: `rlm audit`, `rlm mine`; runs: `rlm runs`, `show`, `resume`
- templates: `rlm templates` (the template table of a log)
- tools: --version, `rlm models`, `rlm config`, `rlm fixture`, `rlm mcp`, `rlm calibrate`

`rlm --version` prints its line before any command is loaded; `--help` loads the commands'
signatures, and each command imports its work when it runs.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["app", "main"]


def _app():
    from rlm.cli import ask, repo, runs, templates, tools  # noqa: F401 - registers the commands
    from rlm.cli.base import app

    return app


def __getattr__(name: str) -> Any:
    if name == "app":  # the typer app with every command registered (CliRunner tests use it)
        return _app()
    raise AttributeError(f"module 'rlm.cli' has no attribute {name!r}")


def main() -> None:
    if sys.argv[1:] == ["--version"]:  # one line: the version and the model a run would use
        from rlm.models.discover import version_line

        sys.stdout.write(version_line() + "\n")
        return
    from rlm.cli.help import one_line_usage_errors, readable_help

    app = _app()
    readable_help()
    one_line_usage_errors()
    if not sys.argv[1:]:  # bare `rlm`: the help, and that is not an error
        app(["--help"], prog_name="rlm")
    app(prog_name="rlm")
