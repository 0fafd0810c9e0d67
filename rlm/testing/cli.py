"""Run the `rlm` command line in this process, as a test would run it in a subprocess.

``run_cli("ask", "big.log", "anomalies?", "--json")`` returns a subprocess.CompletedProcess
(``returncode``, ``stdout``, ``stderr``) from typer's CliRunner, with what `rlm`'s entry point
adds (the readable help, one-line usage errors, the bare `rlm` help) and with ``sys.argv`` and,
when ``env`` is given, the whole environment as a subprocess would see them. Starting a Python
process per call costs seconds on a loaded machine; use a real process only where it is the
point (signals, the installed entry point, MCP over stdio).
"""

from __future__ import annotations

import os
import subprocess
import sys
import traceback
from typing import Mapping


def run_cli(*args: str, env: Mapping[str, str] | None = None,
            input: str | bytes | None = None) -> subprocess.CompletedProcess:
    from typer.testing import CliRunner

    from rlm.cli import app
    from rlm.cli.help import one_line_usage_errors, readable_help

    readable_help()
    one_line_usage_errors()
    argv = list(args) or ["--help"]  # bare `rlm`: the help, as the entry point does
    saved_env, saved_argv = os.environ.copy(), sys.argv
    try:
        if env is not None:  # a subprocess gets exactly `env`
            os.environ.clear()
            os.environ.update(env)
        sys.argv = ["rlm", *args]  # what the run record keeps (rlm.cli.base._argv)
        res = CliRunner().invoke(app, argv, input=input, prog_name="rlm")
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
        sys.argv = saved_argv
    stderr = res.stderr
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        stderr += "".join(traceback.format_exception(res.exception))  # as the process would
    return subprocess.CompletedProcess(["rlm", *args], res.exit_code, res.stdout, stderr)
