"""The answer reads well: code says what was found first, then how; English counts; group
headers that do not repeat their text; sizes in decimal MB."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from rlm.fixtures.log import write_log
from rlm.testing.cli import run_cli  # in-process: a process per call costs seconds


def rlm(*args):
    e = dict(os.environ, RLM_MODEL="none")
    return run_cli(*args, env=e)


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    p = tmp_path_factory.mktemp("log") / "app.log"
    return p, write_log(p, lines=20_000)


def test_profile_answer_starts_with_what_was_found(log):
    p, key = log
    r = rlm("ask", str(p), "anomalies?", "--json")
    rep = json.loads(r.stdout)
    first = rep["answer"].split("\n\n")[0]
    assert first.startswith("**Found:** 4 `") and "(ERROR)" in first  # the top event kind
    assert "Also picked by code's rules: 12 lines in 3 groups: " in first
    assert f"one story of 5 lines sharing `{key['session_id']}`" in first
    assert "4 error-level lines like “" in first and "panic" in first
    assert not rep["answer"].startswith("No fan-out")


def test_report_counts_read_as_english_and_headers_do_not_repeat(log):
    p, _ = log
    r = rlm("ask", str(p), "anomalies?")
    out = r.stdout
    assert "(s)" not in out, [x for x in out.splitlines() if "(s)" in x][:3]
    assert ", 1 file, kind log" in out and "1.7 MB (1,703,444 bytes)" in out
    rep = json.loads(rlm("ask", str(p), "anomalies?", "--json").stdout)
    for g in rep["groups"]:
        if g["kind"] != "identifier":
            header = next(x for x in out.splitlines() if x.startswith(f"**{g['id']} ·"))
            assert header.count(g["why"]) <= 1, header


def test_grep_answer_leads_with_the_hits(log):
    p, key = log
    txn = key["txn_ids"][1]
    r = rlm("ask", str(p), f"what happened to {txn}?")
    answer = r.stdout.split("## Answer", 1)[1].strip()
    assert answer.startswith(f"**Found:** 1 line mentions {txn} at ")
    assert "1 line matches" in r.stdout and "line(s)" not in r.stdout


def test_a_log_where_nothing_fails_says_so_first(tmp_path):
    """Debian's alternatives.log (no level, no failure): the headline led with a 1-line kind as
    if it were the finding; it now says first that no kind is at error level or has a failure
    word, and which kind is only the most unusual."""
    p = tmp_path / "alternatives.log"
    groups = ["pager", "editor", "x-www-browser", "pinentry", "awk", "java", "rmid", "jexec"]
    lines = [f"update-alternatives 2025-06-24 14:{36 + i // 60:02d}:{i % 60:02d}: link group "
             f"{groups[i % len(groups)]} updated to point to /usr/bin/{groups[i % 5]}"
             for i in range(3000)]
    lines.insert(1500, "update-alternatives 2025-06-24 15:01:00: run with --quiet --install "
                       "/usr/bin/pager pager /usr/bin/less 77 --slave /usr/share/man/man1/pager.1.gz")
    p.write_text("\n".join(lines) + "\n")
    rep = json.loads(rlm("ask", str(p), "anomalies?", "--json").stdout)
    first = rep["answer"].split("\n\n")[0]
    assert first.startswith("**Found:** no event kind at error level or worse, and none with a "
                            "failure word; the most unusual of "), first
