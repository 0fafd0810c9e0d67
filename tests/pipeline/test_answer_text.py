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
