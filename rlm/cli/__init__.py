"""The `rlm` command line: parsing options and rendering reports only; the work happens in
rlm.api (ask), rlm.audit and rlm.mine. One module per group of commands:

- base: the app, shared options, one-line errors and exit codes, report output
- ask: `rlm ask`; repo: `rlm audit`, `rlm mine`; runs: `rlm runs`, `show`, `resume`
- templates: `rlm templates` (the template table of a log)
- tools: --version, `rlm models`, `rlm config`, `rlm fixture`, `rlm mcp`, `rlm calibrate`
"""

from __future__ import annotations

import sys

from rlm.cli import ask, repo, runs, templates, tools  # noqa: F401 - registers the commands
from rlm.cli.base import app

__all__ = ["app", "main"]


def main() -> None:
    from rlm.cli_help import one_line_usage_errors, readable_help

    readable_help()
    one_line_usage_errors()
    if not sys.argv[1:]:  # bare `rlm`: the help, and that is not an error
        app(["--help"], prog_name="rlm")
    app(prog_name="rlm")
