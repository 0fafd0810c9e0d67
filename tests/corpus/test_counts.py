"""Counting and time-window questions on logs, answered by code: exact numbers known from the
fixture's key, example lines cited, no model."""

from __future__ import annotations

import json

import pytest
from rlm.fixtures.log import write_log

from rlm.corpus.counts import count_lines, group_key, parse_count
from rlm.corpus.source import TextSource
from rlm.corpus.timewindow import parse_window, window_lines
from rlm.testing import run_cli


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    p = tmp_path_factory.mktemp("counts") / "app.log"
    key = write_log(p, lines=30_000)
    return p, key


def ask(path, question):
    r = run_cli("ask", str(path), question, "--json", "--model", "none")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.parametrize("q,kind,by", [
    ("how many errors?", "count", None),
    ("how many errors per hour?", "count", "hour"),
    ("How many failed logins per user?", "count", "user"),
    ("most common errors?", "top", "shape"),
    ('how many times did "TXN-4444" appear?', "count", None),
    ("what is unusual?", None, None),
])
def test_parse_count(q, kind, by):
    cq = parse_count(q)
    assert (cq.kind if cq else None) == kind
    if cq:
        assert cq.by == by


def test_count_answers_match_the_key(log):
    p, key = log
    panics = [n for n in key["needles"] if n["kind"] == "panic"]
    overrides = [n for n in key["needles"] if n["kind"] == "config_override"]
    with TextSource(p) as src:
        r = count_lines(src, parse_count("how many errors?"))
        assert r.total == len(panics) and r.examples == [n["line"] for n in panics]
        r = count_lines(src, parse_count("how many overrides per actor?"))
        assert r.total == len(overrides)
        assert {k: c for k, (c, _) in r.groups.items()} == {
            n["text"].split("actor=")[1]: 1 for n in overrides}
        sid = key["session_id"]
        r = count_lines(src, parse_count(f'how many lines mention "{sid}"?'))
        assert r.examples == [n["line"] for n in key["needles"] if n["kind"] == "session"]
        r = count_lines(src, parse_count("how many lines per service?"))
        assert r.total == key["lines"] and sum(c for c, _ in r.groups.values()) == key["lines"]


def test_count_question_end_to_end_cites_lines_and_states_the_number(log):
    p, key = log
    panics = [n for n in key["needles"] if n["kind"] == "panic"]
    rep = ask(p, "how many panics per component?")
    assert rep["strategy"] == "count" and rep["usage"]["calls"] == 0
    assert f"**{len(panics)}**" in rep["answer"]
    assert [f["source"]["line_start"] for f in rep["findings"]] == [panics[0]["line"]]
    assert all(f["rules"] == ["count"] and f["verified"] for f in rep["findings"])


def test_group_keys():
    line = "2026-03-14T08:05:01.123Z WARN  [auth] user=jdoe ip=10.0.0.7 status=403 login failed"
    assert group_key("hour", line) == "2026-03-14 08"
    assert group_key("minute", line) == "2026-03-14 08:05"
    assert group_key("user", line) == "jdoe"
    assert group_key("status", line) == "403"
    assert group_key("ip", line) == "10.0.0.7"
    assert group_key("level", line) == "warning"
    assert group_key("component", line) == "auth"


def test_time_window_lines_by_binary_search(log):
    p, key = log
    panic = [n for n in key["needles"] if n["kind"] == "panic"][2]  # mid-file
    hhmm = panic["text"][11:16]
    w = parse_window(f"what happened around {hhmm}?")
    with TextSource(p) as src:
        (a, b), = window_lines(src, w)
        assert 1 < a <= panic["line"] <= b < src.line_count
        inside = src.lines(a, b)
        before, after = src.line(a - 1), src.line(b + 1)
    assert all(w.start <= _sod(s) < w.end for s in inside)
    assert _sod(before) < w.start and _sod(after) >= w.end


def _sod(line: str) -> float:
    h, m, s = line[11:13], line[14:16], line[17:23]
    return int(h) * 3600 + int(m) * 60 + float(s)


def test_time_window_question_restricts_the_profile(log):
    p, key = log
    panic = [n for n in key["needles"] if n["kind"] == "panic"][2]
    hhmm = panic["text"][11:16]
    rep = ask(p, f"what happened between {hhmm} and {hhmm}?")
    assert rep["strategy"] == "profile"
    lines = {f["source"]["line_start"] for f in rep["findings"]}
    assert lines == {panic["line"]}  # the other needles are outside the minute
    assert "restricted to the time window" in rep["coverage"]["statement"]
    assert rep["coverage"]["lines_scanned_by_code"] < key["lines"] / 10


def test_time_window_restricts_grep_hits_and_counts(log):
    p, key = log
    steps = [n for n in key["needles"] if n["kind"] == "session"]
    second = steps[1]
    hhmm = second["text"][11:16]
    sid = key["session_id"]
    rep = ask(p, f'what did "{sid}" do between {hhmm} and {hhmm}?')
    assert rep["strategy"] == "grep"
    assert [f["source"]["line_start"] for f in rep["findings"]] == [second["line"]]
    assert "restricted to the time window" in rep["coverage"]["statement"]
    with TextSource(p) as src:
        (a, b), = window_lines(src, parse_window(f"between {hhmm} and {hhmm}"))
    rep = ask(p, f"how many lines between {hhmm} and {hhmm}?")
    assert f"**{b - a + 1:,}** lines" in rep["answer"]
