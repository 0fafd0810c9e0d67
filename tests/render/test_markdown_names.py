"""File names reach the Markdown report escaped: a newline in a name cannot start a heading, a
right-to-left override cannot reverse what the reader sees, a backtick cannot close the code
span; each control character is shown as an escape (issue 21, item 15)."""

from __future__ import annotations

import json
import os

from rlm.render.safetext import code, link_target, text, visible
from rlm.testing import run_cli

EVIL = "notes\n# Injected heading \u202egol.exe`x\x1b[31m.log"


def test_visible_code_and_text():
    assert visible("a\nb\u202ec\x1bd\u200be") == "a\\nb\\u202ec\\x1bd\\u200be"
    assert visible("plain/path_ok.log") == "plain/path_ok.log"
    assert code("a`b") == "``a`b``" and code("`x") == "`` `x ``"
    assert text("*bold* [x](y)") == "\\*bold\\* \\[x\\]\\(y\\)"
    assert "\n" not in link_target("dir/a b\n(c).py#L3") and "%20" in link_target("a b")


def test_a_hostile_file_name_is_escaped_in_the_markdown_report(tmp_path):
    d = tmp_path / "logs"
    d.mkdir()
    (d / EVIL).write_text("".join(f"2026-03-01 12:00:{i:02d} INFO ok {i}\n" for i in range(40))
                          + "2026-03-01 12:01:00 ERROR disk full on node-7\n")
    (d / "plain.log").write_text("2026-03-01 12:00:00 INFO node-7 fine\n")  # two files: named
    out = tmp_path / "report.md"
    env = {k: v for k, v in os.environ.items() if k not in ("RLM_MODEL", "RLM_BASE_URL")}
    r = run_cli("ask", str(d), "what about 'node-7'?", "--model", "none", "--out", str(out),
                "--json", env=env)
    assert r.returncode in (0, 3), r.stderr
    md = out.read_text("utf-8")
    assert "node-7" in md  # the file was read and cited
    assert "\u202e" not in md and "\x1b" not in md
    assert not any(line.startswith("# Injected") for line in md.splitlines())
    assert "notes\\n# Injected heading \\u202egol.exe`x\\x1b[31m.log" in md
    rep = json.loads(r.stdout)  # the JSON report keeps the name as it is: it is data
    assert any(f["source"]["path"].endswith(EVIL) for f in rep["findings"])
