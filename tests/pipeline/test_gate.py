"""The gate (rlm.pipeline.gate.decide): the one decision of how `rlm ask` answers, on real
OpenSSH lines (LogHub's sample in evals/data/loghub), small and repeated past the direct size."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rlm.corpus.probe import Probe, probe_source
from rlm.corpus.source import TextSource
from rlm.errors import UsageError
from rlm.pipeline import gate

SSH = Path(__file__).resolve().parents[2] / "evals" / "data" / "loghub" / "OpenSSH_head.log"


def _log(tmp_path: Path, copies: int) -> Path:
    p = tmp_path / f"ssh-{copies}.log"
    p.write_bytes(SSH.read_bytes() * copies)
    return p


def _decide(p: Path, question: str, **kw) -> gate.Decision:
    with TextSource(p) as src:
        pr = probe_source(src)
        return gate.decide(pr, question, 8000, pr.bytes // 4, sources=[src], **kw)


def test_a_small_log_is_read_directly(tmp_path):
    dec = _decide(_log(tmp_path, 1), "what happened with user webmaster?")
    assert dec.strategy == "direct" and not dec.forced
    assert "one direct call reads all of it" in dec.reasons[0]


def test_too_big_for_one_call_is_said_with_the_sizes(tmp_path):
    dec = _decide(_log(tmp_path, 60), "anomalies?", code_only=True)
    assert dec.strategy == "profile", dec.reasons
    assert any("too big for one call" in r and "5,940 lines" in r for r in dec.reasons), dec.reasons


def test_a_counting_question_about_a_log_is_counted_by_code(tmp_path):
    dec = _decide(_log(tmp_path, 60), "how many failed password attempts are there?",
                  code_only=True)
    assert dec.strategy == "count", dec.reasons
    assert dec.replaced in gate.STRATEGIES and dec.replaced != "count"


def test_a_forced_strategy_is_never_replaced(tmp_path):
    dec = _decide(_log(tmp_path, 60), "how many failed password attempts are there?",
                  force="fanout")
    assert (dec.strategy, dec.forced, dec.replaced) == ("fanout", True, None)
    assert dec.reasons[0].startswith("strategy forced by --strategy fanout")


def test_an_open_question_on_text_that_is_not_a_log_is_not_profiled(tmp_path):
    p = tmp_path / "notes.txt"
    p.write_text("".join(f"Paragraph {i} of the minutes talks about the budget and the roof.\n"
                         for i in range(8000)))
    dec = _decide(p, "anything unusual?", code_only=True)
    assert dec.strategy != "profile", dec.reasons


def test_a_folder_of_small_logs_with_an_open_question_is_profiled_as_one_log():
    pr = Probe(path="logs", bytes=20_000, lines=198, files=2, kind="log")
    dec = gate.decide(pr, "anomalies?", 8000, 5000, n_sources=2)
    assert dec.strategy == "profile"
    assert any("profiles all files as one log" in r for r in dec.reasons), dec.reasons


def test_a_window_note_comes_first(tmp_path):
    dec = _decide(_log(tmp_path, 1), "anomalies?", window_note="window: Dec 10 06:55-07:00")
    assert dec.reasons[0] == "window: Dec 10 06:55-07:00"


@pytest.mark.parametrize("force,question,message", [
    ("everything", "anomalies?", "unknown strategy 'everything'"),
    ("grep", "what happened?", "--strategy grep needs anchors"),
])
def test_impossible_strategies_are_usage_errors(tmp_path, force, question, message):
    with pytest.raises(UsageError, match=re.escape(message)):
        _decide(_log(tmp_path, 1), question, force=force)
