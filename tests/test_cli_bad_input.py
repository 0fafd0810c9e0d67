"""Bad input to every command: one line on stderr starting `rlm:`, exit 2, never a traceback.

Usage errors (bad option values, missing arguments, unknown commands or options) used to be
typer's multi-line usage box; a damaged run-records file used to be an "internal error" (exit 1).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from rlm.testing.cli import run_cli  # in-process: a process per call costs seconds


def rlm(*args, env=None):
    e = {k: v for k, v in os.environ.items() if k not in ("RLM_MODEL", "RLM_BASE_URL")}
    return run_cli(*args, env={**e, **(env or {})})


def one_line(r, code=2) -> str:
    assert r.returncode == code, (r.returncode, r.stdout[-500:], r.stderr)
    assert "Traceback" not in r.stderr and "╭" not in r.stderr, r.stderr
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("rlm:"), r.stderr
    return lines[0]


@pytest.fixture
def here(tmp_path):
    (tmp_path / "ok.txt").write_text("one line\n")
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "a.py").write_text("x = 1\n")
    (tmp_path / "bin.dat").write_bytes(b"\x00\x01binary\x00")
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "dir").mkdir()
    return tmp_path


@pytest.mark.parametrize("args,says", [
    (["ask", "{t}/ok.txt", "q?", "--max-calls", "0"], "ask: Invalid value for '--max-calls'"),
    (["ask", "{t}/ok.txt", "q?", "--max-calls", "abc"], "--max-calls"),
    (["ask", "{t}/ok.txt", "q?", "--max-tokens", "0"], "--max-tokens"),
    (["ask", "{t}/ok.txt", "q?", "--concurrency", "0"], "--concurrency"),
    (["ask", "{t}/ok.txt", "q?", "--timeout", "-1"], "--timeout"),
    (["ask", "{t}/ok.txt"], "Missing argument 'question'"),
    (["ask", "{t}/ok.txt", "q?", "--bogus"], "No such option: --bogus"),
    (["mine", "{t}/repo"], "mine: Missing argument 'questions'"),
    (["runs", "--limit", "0"], "--limit"),
    (["fixture", "log"], "fixture log: Missing argument 'path'"),
    (["fixture", "bogus", "x"], "No such command 'bogus'"),
    (["bogus"], "No such command 'bogus'"),
])
def test_usage_errors_are_one_line(here, args, says):
    msg = one_line(rlm(*[a.format(t=here) for a in args]))
    assert says in msg and "--help`)" in msg


@pytest.mark.parametrize("args,says", [
    (["ask", "{t}/nope.txt", "q?"], "no such file"),
    (["ask", "{t}/dir", "q?"], "no readable text files"),
    (["ask", "{t}/bin.dat", "q?"], "binary"),
    (["ask", "{t}/empty.txt", "q?"], "empty"),
    (["ask", "{t}/ok.txt", "  "], "the question is empty"),
    (["ask", "{t}/ok.txt", "q?", "--model", "bogus"], "needs --base-url"),
    (["ask", "{t}/ok.txt", "q?", "--base-url", "notaurl", "--model", "m"], "invalid base URL"),
    (["ask", "{t}/ok.txt", "q?", "--strategy", "bogus"], "unknown strategy"),
    (["ask", "{t}/ok.txt", "q?", "--out", "{t}/dir"], "cannot write"),
    (["audit", "{t}/ok.txt"], "not a folder"),
    (["mine", "{t}/nope", "q?"], "no such folder"),
    (["show", "nope"], "no recorded run matches"),
    (["config", "set", "redact", "maybe"], "expected on or off"),
    (["mcp", "--http", "bogus"], "expected HOST:PORT"),
])
def test_bad_paths_and_values_are_one_line(here, args, says):
    assert says in one_line(rlm(*[a.format(t=here) for a in args]))


def test_a_bad_config_file_is_one_line(here, tmp_path):
    cfg = tmp_path / "_rlm_config"
    cfg.mkdir(exist_ok=True)
    (cfg / "config.json").write_text("model = [unclosed\n")
    for args in (["ask", str(here / "ok.txt"), "q?"], ["config", "show"], ["models"]):
        assert "not valid JSON" in one_line(rlm(*args))
    (cfg / "config.json").write_text("[1, 2]")
    assert "expected a JSON object" in one_line(rlm("ask", str(here / "ok.txt"), "q?"))


def test_damaged_run_records_are_one_line_and_ask_still_answers(here, tmp_path):
    data = tmp_path / "_rlm_data"
    data.mkdir(exist_ok=True)
    (data / "runs.sqlite3").write_text("garbage, not a database\n" * 10)
    for args in (["runs"], ["show", "last"], ["resume", "last"]):
        msg = one_line(rlm(*args))
        assert "run records" in msg and "cannot be read" in msg and "delete it" in msg
    r = rlm("ask", str(here / "ok.txt"), "what does the line say?")
    assert r.returncode in (0, 3) and "## Answer" in r.stdout  # answered, just not recorded
    assert "this run is not recorded" in r.stderr and "Traceback" not in r.stderr
