"""A run finds an unreachable or misconfigured server before it reads the corpus."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

from rlm.testing import FakeServer


def _dead_url() -> str:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}/v1"


def _ask_stdin_never_ending(url: str, *extra: str):
    """`rlm ask -` on a pipe that never ends: reading the corpus first would hang until the
    timeout, so only a run that checks the server first can answer."""
    proc = subprocess.Popen([sys.executable, "-m", "rlm.cli", "ask", "-", "anomalies?",
                             "--base-url", url, "--model", "m", *extra],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=dict(os.environ))
    proc.stdin.write("2026-01-01 INFO a line of a log that goes on and on\n" * 1_000)  # under a pipe buffer: never blocks
    proc.stdin.flush()
    try:
        proc.wait(timeout=30)  # stdin stays open: the corpus never ends
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise AssertionError("the run read the corpus before checking the server") from None
    out, err = proc.stdout.read(), proc.stderr.read()
    proc.stdin.close()
    return proc.returncode, out, err


def test_unreachable_server_fails_before_reading_the_corpus():
    url = _dead_url()
    code, out, err = _ask_stdin_never_ending(url)
    lines = [x for x in err.splitlines() if x.strip()]
    assert code == 2 and out == "" and "Traceback" not in err
    assert len(lines) == 1 and lines[0].startswith("rlm:") and url in lines[0]


def test_wrong_api_key_fails_before_reading_the_corpus():
    with FakeServer(api_key="right-key") as server:
        code, out, err = _ask_stdin_never_ending(server.url)
    lines = [x for x in err.splitlines() if x.strip()]
    assert code == 2 and len(lines) == 1 and "401" in lines[0] and "API key" in lines[0]
    assert "right-key" not in err
