"""The command line reads well: version, bare `rlm`, usage and flags in help."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from rlm.testing.cli import run_cli  # in-process: a process per call costs seconds


def rlm(*args, env=None):
    e = dict(os.environ, COLUMNS="100", **(env or {}))
    return run_cli(*args, env=e)


def test_version():
    from rlm import __version__

    r = rlm("--version")
    assert r.returncode == 0 and r.stdout.startswith(f"rlm {__version__}")


def test_bare_rlm_prints_help_and_exits_0():
    r = rlm()
    assert r.returncode == 0, r.stderr
    out = r.stdout + r.stderr
    assert "Usage: rlm" in out and "ask" in out and "Traceback" not in out


def test_ask_usage_names_its_arguments_and_flags_take_no_value():
    r = rlm("ask", "--help")
    assert r.returncode == 0
    assert re.search(r"Usage: rlm ask \[OPTIONS\] PATH QUESTION", r.stdout), r.stdout[:300]
    assert "{path}" not in r.stdout and "{question}" not in r.stdout
    assert "<bool>" not in r.stdout
    assert re.search(r"--json\s", r.stdout) and re.search(r"--max-calls\s+<int", r.stdout)


def test_top_level_help_shows_no_bool_placeholders():
    r = rlm("--help")
    assert r.returncode == 0 and "<bool>" not in r.stdout and "--version" in r.stdout
