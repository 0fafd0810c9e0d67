"""The eval harness: scoring functions on known inputs, the fault case, the context-assembly
layouts and the baselines, all against the fake server (no embedded model)."""

from __future__ import annotations

import json
import os
import re

import anyio
import pytest


from evals import scoring  # noqa: E402
from evals.context_assembly import buried_messages, build_items, clean_messages  # noqa: E402
from evals.harness import run_naive, run_truncated  # noqa: E402
from evals.run import fault_case, main as eval_main, reduce_guard_case, write_notes  # noqa: E402
from rlm.models.openai_compat import OpenAICompatModel, reset_mode_cache  # noqa: E402


def F(a, b=None, verified=True, claim="x"):
    return {"claim": claim, "verified": verified, "source": {"line_start": a, "line_end": b or a}}


# ------------------------------------------------------------------------------ scoring

def test_score_lines_counts_only_verified_citations():
    fs = [F(10), F(20, 22), F(30, verified=False), F(99)]
    s = scoring.score_lines(fs, [10, 21, 30, 40])
    assert s["recall"] == 0.5 and s["found"] == [10, 21] and s["missed"] == [30, 40]
    assert s["precision"] == pytest.approx(2 / 3)  # 10 and 20-22 relevant, 99 not
    assert scoring.score_lines([], [1])["precision"] is None
    assert scoring.score_lines([F(5)], [1], relevant=[5])["precision"] == 1.0


@pytest.mark.parametrize("value,text,ok", [
    ("285,000", "The final budget is $285,000.", True),
    ("285,000", "It ended at 285000 dollars", True),
    ("285,000", "we have $285k", True),
    ("285,000", "first 1,285,000 then nothing", False),
    ("9", "headcount is 19", False),
    ("9", "trimmed to 9 people", True),
    ("April 14", "launch on 14 April", True),
    ("April 14", "launch on April 14th.", True),
    ("April 14", "launch on April 1", False),
])
def test_value_in_text(value, text, ok):
    assert scoring.value_in_text(value, text) is ok


def test_score_revised_final_value_by_citation_or_answer():
    rev = {"values": [{"line": 10, "value": "240,000"}, {"line": 50, "value": "310,000"},
                      {"line": 90, "value": "285,000"}]}
    by_cite = scoring.score_revised([F(90), F(7)], "no idea", rev)
    assert by_cite["recall"] == 1.0 and by_cite["final_cited"] and by_cite["precision"] == 0.5
    by_answer = scoring.score_revised([], "It is $285,000 now (was 240,000).", rev)
    assert by_answer["recall"] == 1.0 and not by_answer["stale"]
    stale = scoring.score_revised([F(10)], "The budget is $240,000.", rev)
    assert stale["recall"] == 0.0 and stale["stale"] and stale["earlier_in_answer"] == ["240,000"]


def test_score_fault_requires_list_and_statement():
    failed = [{"chunk": "c0003"}, {"chunk": "c0007"}]
    s = scoring.score_fault(failed, "… failed: c0003 x; c0007 y. INCOMPLETE", False, ["c0003", "c0007"])
    assert s["recall"] == 1.0 and s["precision"] == 1.0 and s["exact"]
    s = scoring.score_fault(failed, "… failed: c0003 only", False, ["c0003"])
    assert s["recall"] == 1.0 and s["precision"] == 0.5 and not s["exact"]
    assert not scoring.score_fault([], "", True, ["c0001"])["recall"]


def test_preservation_share():
    p = scoring.preservation(["budget 285,000 for TXN-4444", "9 agents"],
                             ["budget 285,000 (TXN-4444) and more"])
    assert p["total"] == 4 and p["missing"] == 1  # 285, 000, TXN-4444, 9 (reducer rules)
    assert p["missing"] == 1 and p["missing_examples"] == ["9"]
    assert scoring.preservation([], [])["share_missing"] is None


# ------------------------------------------------------------------------------ cases

def test_fault_case_names_exactly_the_failed_chunks(tmp_path):
    rows, expected = anyio.run(lambda: fault_case(tmp_path))
    assert len(expected) == 2
    for r in rows:
        assert r["strategy"] == "fanout" and not r["complete"]
        assert r["score"]["exact"], r["note"]
        assert sorted(r["score"]["listed"]) == sorted(expected)
        assert r["recall"] == 1.0 and r["precision"] == 1.0
        assert all(c in r["statement"] for c in expected) and "INCOMPLETE" in r["statement"]


def test_reduce_guard_case_loses_no_number_or_id(tmp_path):
    preserve = []
    [r] = anyio.run(lambda: reduce_guard_case(tmp_path, preserve))
    assert r["reduce"]["rounds"] >= 1 and r["reduce"]["refused_merges"] > 0
    assert r["recall"] == 1.0 and r["complete"]
    [p] = preserve
    assert p["total"] > 100 and p["missing"] == 0 and p["share_missing"] == 0.0


def test_context_assembly_layouts_hold_the_same_facts(tmp_path):
    [item, *_] = build_items([7], tmp_path, lines=300)

    class Counter:
        name, context_tokens = "counter", 8192

        def count_tokens(self, text):
            return len(text) // 4

    clean = clean_messages(item)
    buried = buried_messages(item, Counter(), 2000)
    assert len(clean) == 2 and len(buried) > 8
    assert buried[0] == clean[0]  # same instructions
    clean_text = clean[1]["content"]
    buried_text = "\n".join(m["content"] for m in buried[1:])
    for _, fact in item.facts:
        assert fact in clean_text and fact in buried_text
    assert buried[-1]["content"].startswith(f"Question: {item.question}")
    assert 1500 <= sum(len(m["content"]) // 4 for m in buried) <= 3000
    assert "service.log" in buried_text and "sed -n" in buried_text


def _fake_model(server, ctx=2048):
    reset_mode_cache()
    return OpenAICompatModel("fake", server.url, context_tokens=ctx, timeout=5.0, max_attempts=2,
                             backoff_base=0.01)


def test_truncated_direct_reads_only_what_fits(tmp_path, fake_server):
    p = tmp_path / "notes.txt"
    key = write_notes(p)
    seen = []

    def answer(req, text):
        seen.append(text)
        return {"answer": "It is booked in room 4B at Harbour Hall.", "cites": [key["line"], 5000]}

    fake_server.on("AnswerResult", answer)
    r = anyio.run(lambda: run_truncated(_fake_model(fake_server, ctx=1024), str(p), "which room?"))
    n = int(re.search(r"read lines 1-(\d+) of 180", r.note).group(1))
    assert 10 < n < 180 and not r.complete and r.calls == 1
    assert f"\n{n}| " in seen[0] and f"\n{n + 1}| " not in seen[0]
    assert [f["source"]["line_start"] for f in r.findings] == ([key["line"]] if n >= key["line"] else [])
    full = anyio.run(lambda: run_truncated(_fake_model(fake_server, ctx=8192), str(p), "which room?"))
    assert full.complete and [f["source"]["line_start"] for f in full.findings] == [key["line"]]


def test_naive_fanout_is_capped_and_says_so(tmp_path, fake_server):
    p = tmp_path / "prose.txt"
    p.write_text("".join(f"Line {i} of ordinary prose about the weather.\n" for i in range(3000)))
    r = anyio.run(lambda: run_naive(_fake_model(fake_server), str(p), "what is said?", 3))
    assert r.strategy == "fanout" and r.calls == 3 and not r.complete
    assert r.note.startswith("CAPPED at 3 calls (retries included)") and r.chunks_ok == 3


def test_eval_runner_writes_results(tmp_path, fake_server):
    fake_server.on("AnswerResult", lambda req, text: {"answer": "Room 4B at Harbour Hall.",
                                                      "cites": [131]})
    rc = eval_main(["--model", "fake", "--base-url", fake_server.url, "--cases",
                    "notes-180,fault", "--out-dir", str(tmp_path), "--timeout", "5"])
    assert rc == 0
    data = json.loads((tmp_path / "results.json").read_text())
    rows = {(r["case"], r["system"]): r for r in data["rows"]}
    assert rows[("notes-180", "rlm")]["strategy"] == "direct"
    assert rows[("notes-180", "rlm")]["recall"] == 1.0
    assert rows[("notes-180", "truncated-direct")]["note"].startswith("same run as rlm")
    assert rows[("fault", "rlm")]["score"]["exact"]
    md = (tmp_path / "RESULTS.md").read_text()
    assert "| case | system | model | strategy | recall |" in md and "Machine:" in md
