"""Weak candidate anchors (keen-jacket, follow-up) become anchors only when the corpus says they
are rare: a bounded code count before the gate decides, stopped by Ctrl-C like any scan."""

from __future__ import annotations

import os

import anyio
import pytest


from fixtures.sniah import write_sniah  # noqa: E402
from rlm.api import AskOptions, ask  # noqa: E402
from rlm.corpus.grep import candidate_anchors, extract_anchors  # noqa: E402
from rlm.corpus.probe import probe_source  # noqa: E402
from rlm.corpus.rarity import rare_candidates  # noqa: E402
from rlm.corpus.source import TextSource  # noqa: E402
from rlm.engine.interrupt import ScanInterrupted, controlled  # noqa: E402
from rlm.pipeline import gate  # noqa: E402


def test_candidates_are_the_weak_tokens_only():
    q = "What is the special magic number for keen-jacket mentioned in the provided text?"
    assert extract_anchors(q) == [] and candidate_anchors(q) == ["keen-jacket"]
    assert candidate_anchors("what follow-up was agreed for userId in auth.service?") == [
        "follow-up", "userId", "auth.service"]
    assert candidate_anchors("where did TXN-4444 fail? e.g. in the U.S.") == []  # a strong anchor


def test_capitals_written_together_are_one_phrase_anchor():
    """`RECEIVED SIGNAL` is a phrase a log writes: one anchor. Two anchors made a count of the
    lines holding either word (2 `Received completed container` lines of Hadoop_2k, for a
    phrase that is on none)."""
    assert extract_anchors("how many lines mention RECEIVED SIGNAL?") == ["RECEIVED SIGNAL"]
    assert extract_anchors("any OUT OF MEMORY on R30-M0-N9-C:J16-U01?") == [
        "R30-M0-N9-C:J16-U01", "OUT OF MEMORY"]
    assert extract_anchors("lines with ERROR WARN") == []  # level words are no anchors
    assert extract_anchors("where did TXN-4444 and ERR_CONN_RESET fail?") == [
        "TXN-4444", "ERR_CONN_RESET"]


def test_word_key_sniah_takes_the_grep_path_with_the_oracle(tmp_path):
    p = tmp_path / "sniah.txt"
    truth = write_sniah(p, 32_000, (0.2, 0.5, 0.8), "words", distractors=3, seed=11)
    spec = f"sim:oracle?key={p}.truth.json&context=2048"
    rep = ask(str(p), truth["question"], AskOptions(model=spec))
    assert rep.strategy == "grep", rep.gate.reasons
    n_lines = truth["lines"]
    assert any(f"{truth['key']!r} occurs on 3 of {n_lines:,} lines" in r and "no model call" in r
               for r in rep.gate.reasons), rep.gate.reasons
    assert rep.usage.calls <= 3, rep.usage
    assert all(v in rep.answer for v in truth["values"]), rep.answer  # recall 100%
    want = {n["line"] for n in truth["needles"] if n["queried"]}
    assert {f.source.line_start for f in rep.findings if f.verified} == want


def _corpus(tmp_path, name: str, line: str, every: int, n: int = 6000):
    p = tmp_path / name
    with open(p, "w") as fh:
        for i in range(n):
            fh.write(line.format(i=i) if i % every == 0 else
                     f"2026-03-14T09:00:{i % 60:02d}Z INFO worker served request {i} in 5 ms\n")
    return p


def _decide(p, question: str):
    src = TextSource(p)
    pr = probe_source(src)
    try:
        return gate.decide(pr, question, 2000, pr.bytes // 4, sources=[src])
    finally:
        src.close()


def test_a_common_hyphenated_word_is_not_an_anchor(tmp_path):
    line = "2026-03-14T09:00:00Z INFO the follow-up for ticket {i} was agreed\n"
    p = _corpus(tmp_path, "common.log", line, every=10)  # on 600 of 6,000 lines
    dec = _decide(p, "what follow-up was agreed?")
    assert dec.strategy == "fanout" and dec.anchors == []
    assert any("'follow-up' occurs on 51 or more of 6,000 lines: too common" in r
               for r in dec.reasons), dec.reasons
    dec = _decide(p, "which follow-up problems happened?")  # open question on a log: profiles
    assert dec.strategy == "profile" and dec.anchors == []


def test_a_rare_hyphenated_word_is_an_anchor_and_an_absent_one_is_not(tmp_path):
    line = "2026-03-14T09:00:00Z WARN the follow-up for ticket {i} was agreed\n"
    p = _corpus(tmp_path, "rare.log", line, every=1500)  # on 4 of 6,000 lines
    dec = _decide(p, "what follow-up or keen-jacket was agreed?")
    assert dec.strategy == "grep" and dec.anchors == ["follow-up"]
    assert any("'follow-up' occurs on 4 of 6,000 lines: rare" in r for r in dec.reasons)
    assert any("'keen-jacket' occurs on no line" in r for r in dec.reasons)


def test_the_count_has_a_time_budget(tmp_path):
    p = _corpus(tmp_path, "rare.log", "the follow-up {i}\n", every=1500)
    with TextSource(p) as src:
        [r] = rare_candidates([src], ["follow-up"], 6000, budget_s=0.0)
    assert not r.rare and r.timed_out and "budget" in r.reason()


def test_the_count_stops_at_ctrl_c(tmp_path):
    p = _corpus(tmp_path, "big.log", "x {i}\n", every=10**9, n=300_000)  # ~19 MB, no match
    size = p.stat().st_size
    seen = []

    async def count():
        def progress(what, done, total):
            seen.append(done)
            if done > 0:
                ctl.stop.set()  # Ctrl-C after the first block

        with controlled(handle_sigint=False, on_progress=progress) as ctl:
            with TextSource(p) as src, pytest.raises(ScanInterrupted):
                rare_candidates([src], ["keen-jacket"], 300_000)

    anyio.run(count)
    assert seen and max(seen) < size  # stopped a block in, not at the end
