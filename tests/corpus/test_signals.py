"""Candidate rules: severity in every format, failure words, components, and the rate rules
(burst, silence, return after a quiet stretch) on a labelled BGL-style log."""

from __future__ import annotations

import json

import pytest

from rlm.corpus.profile import profile_log
from rlm.corpus.severity import lexicon_words, severity
from rlm.corpus.signals import component
from rlm.corpus.source import TextSource
from rlm.fixtures.bgl import write_bgl


@pytest.mark.parametrize("line,rank", [
    ("[Sun Dec 04 04:47:44 2005] [error] mod_jk child workerEnv in error state 6", 3),
    ("03-17 16:13:38.811  1702  2395 E AndroidRuntime: FATAL EXCEPTION: main", 0),
    ("03-17 16:13:38.811  1702  2395 W PackageManager: Failure retrieving resources", 4),
    ("E/ActivityManager( 1234): ANR in com.example", 3),
    ("<3>kernel: disk failure on sda", 3),
    ("<14>kernel: eth0 link up", 6),
    ("1117838570 2005.06.03 R02-M1-N0 RAS KERNEL FATAL data TLB error interrupt", 0),
    ("1117838570 2005.06.03 R02-M1-N0 RAS BGLMASTER FAILURE ciodb exited abnormally", 2),
    ("2016-09-28 04:30:30, Error                 CBS    Failed to internally open package.", 3),
    ("Jan 12, 2017 3:04:05 PM org.apache.catalina.Foo SEVERE: Servlet failed", 2),
    ('{"ts": "2024-01-01T00:00:00Z", "level": "error", "msg": "reset"}', 3),
    ("2015-07-29 17:41:44,747 - WARN  [SendWorker:2:QuorumCnxManager$SendWorker@679] - x", 4),
    ("Jun  9 20:10:42 combo su(pam_unix)[25740]: session opened for user news", None),
])
def test_severity_wherever_the_format_puts_it(line, rank):
    assert severity(line) == rank


def test_error_lexicon():
    assert lexicon_words("Connection refused; job FAILED after a timeout: out of memory") == [
        "refused", "failed", "timeout", "out of memory"]
    assert lexicon_words("request done in 23ms") == []


@pytest.mark.parametrize("template,comp", [
    ("# # # # # RAS KERNEL FATAL data TLB error interrupt", "KERNEL"),
    ("# LabSZ sshd[#]: Invalid user webmaster from #", "sshd"),
    ("# INFO  [checkout] req=# POST /#/cart status=# #", "checkout"),
    ("# # # INFO dfs.DataNode$PacketResponder: PacketResponder # for block # terminating",
     "dfs.DataNode$PacketResponder"),
])
def test_component_of_a_shape(template, comp):
    assert component(template) == comp


@pytest.fixture(scope="module")
def bgl(tmp_path_factory):
    p = tmp_path_factory.mktemp("bgl") / "bgl.log"
    key = write_bgl(p, lines=60_000, seed=5)
    with TextSource(p) as src:
        prof = profile_log(src)
    return p, key, prof


def test_rate_rules_find_the_stopped_heartbeat_and_the_return(bgl):
    p, key, prof = bgl
    silence = [x for x in prof.picks if x.rule == "silence"]
    back = [x for x in prof.picks if x.rule == "after-quiet" and b"temperature" in x.template]
    assert [b"heartbeat" in x.template for x in silence] == [True]
    assert len(back) == 1  # (alert context returning after a quiet stretch may be picked too)
    # the silence names the last heartbeat: before the alert at 70%, none after it
    last = silence[0].lines[0]
    with TextSource(p) as src:
        assert "heartbeat" in src.line(last)
        assert not any("heartbeat" in s for s in src.lines(last + 1, src.line_count))
    quiet_end = key["quiet"][1]
    assert quiet_end < back[0].lines[0] <= quiet_end + 2_000


def test_bursts_are_the_big_alert_floods(bgl):
    p, key, prof = bgl
    bursts = [x for x in prof.picks if x.rule == "burst"]
    assert bursts
    alerts = sorted(int(k) for k in key["alert_lines"])
    # every burst is an alert flood or its context lines, never the steady background
    for x in bursts:
        assert min(abs(x.lines[0] - a) for a in alerts) <= 50, x.template
    assert any(set(x.lines) & set(alerts) for x in bursts)


def test_every_candidate_says_which_rule_picked_it_and_all_categories_are_reached(bgl):
    p, key, prof = bgl
    assert prof.candidates and all(prof.rules_by_line.get(ln) for ln in prof.candidates)
    cats = {key["alert_lines"][ln] for ln in prof.candidates if ln in key["alert_lines"]}
    assert cats == set(key["categories"])
    hits = sum(1 for ln in prof.candidates if ln in key["alert_lines"])
    assert hits / len(prof.candidates) >= 0.4  # the old rare-or-error selection: ~0.3


def test_the_key_is_not_in_the_log(bgl):
    p, key, prof = bgl
    first = p.read_text().split("\n", 1)[0]
    assert first.split()[0].isdigit()  # epoch first: no label column
    assert json.loads(p.with_name(p.name + ".truth.json").read_text())["alerts"] == key["alerts"]
