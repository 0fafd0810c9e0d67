"""On a terminal the report is rendered (rich Markdown, wrapped to the window); piped, or
written with --out, it stays plain Markdown."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys

from rlm.fixtures.log import write_log

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")


def _on_a_terminal(args, env):
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "rlm.cli", *args], stdout=slave,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=120)
    os.close(master)
    return proc.returncode, ANSI.sub("", b"".join(chunks).decode("utf-8", "replace"))


def test_report_is_rendered_on_a_terminal_and_plain_when_piped(tmp_path):
    p = tmp_path / "app.log"
    write_log(p, lines=20_000)
    env = dict(os.environ, RLM_MODEL="none", COLUMNS="90", LINES="50", TERM="xterm")
    out_md = tmp_path / "report.md"
    code, screen = _on_a_terminal(["ask", str(p), "anomalies?", "--out", str(out_md)], env)
    assert code == 0
    lines = [x.rstrip() for x in screen.replace("\r", "").splitlines()]
    assert "## Answer" not in screen and "**Found:**" not in screen  # rendered, not raw
    assert "Found:" in screen and "Coverage:" in screen
    assert max(len(x) for x in lines) <= 90  # long paragraphs (coverage) wrap to the window
    plain = out_md.read_text()
    assert "## Answer" in plain and "**Found:**" in plain  # --out stays Markdown
    piped = subprocess.run([sys.executable, "-m", "rlm.cli", "ask", str(p), "anomalies?"],
                           capture_output=True, text=True, env=env, timeout=120)
    assert "## Answer" in piped.stdout and "\x1b[" not in piped.stdout
