"""The ask pipeline end to end, against the real fake HTTP server and real files."""

from __future__ import annotations

import re

import anyio
import pytest

from rlm.testing import Reply
from rlm.api import AskOptions, ask_async
from rlm.fixtures.log import write_log
from rlm.fixtures.transcript import write_transcript
from rlm.models.openai_compat import OpenAICompatModel, reset_mode_cache

NUMBERED = re.compile(r"^(\d+)\| (.*)$", re.M)


def model_for(server, context_tokens: int = 8192) -> OpenAICompatModel:
    reset_mode_cache()
    return OpenAICompatModel("fake", server.url, context_tokens=context_tokens, timeout=5.0,
                             max_attempts=2, backoff_base=0.01)


def run(path, question, server, context_tokens: int = 8192, **opts):
    o = AskOptions(**opts)
    return anyio.run(lambda: ask_async(str(path), question, o,
                                       model=model_for(server, context_tokens)))


def keyword_mapper(keyword: str, usage: dict | None = None):
    """Map responder: cite every numbered line holding `keyword`, quoting it exactly."""

    def fn(req, text):
        found = []
        for m in NUMBERED.finditer(text):
            if keyword in m.group(2):
                found.append({"line": int(m.group(1)), "claim": f"line mentions {keyword} here",
                              "quote": keyword})
        body = {"findings": found[:3]}
        return Reply(content=__import__("json").dumps(body), usage=usage) if usage else body

    return fn


def answer_first_line(req, text):
    m = NUMBERED.search(text)
    return {"answer": "The lines shown answer the question.", "cites": [int(m.group(1))] if m else []}


# ------------------------------------------------------------------------------ gate decisions

@pytest.fixture(scope="module")
def big_log(tmp_path_factory):
    p = tmp_path_factory.mktemp("log") / "big.log"
    key = write_log(p, lines=20_000)
    return p, key


def test_gate_direct_for_a_180_line_file(tmp_path, fake_server):
    p = tmp_path / "small.log"
    write_log(p, lines=180)
    rep = run(p, "anomalies?", fake_server, dry_run=True)
    assert rep.strategy == "direct"
    assert rep.gate.estimate.calls == 1
    assert fake_server.requests == []  # dry run: no model call


def test_gate_profile_for_big_log_open_question(big_log, fake_server):
    p, key = big_log
    rep = run(p, "anomalies?", fake_server, dry_run=True)
    assert rep.strategy == "profile"
    assert any("profile:" in r for r in rep.gate.reasons)
    assert fake_server.requests == []


def test_gate_grep_for_anchored_question(big_log, fake_server):
    p, key = big_log
    rep = run(p, f"what happened to {key['txn_ids'][0]}?", fake_server, dry_run=True)
    assert rep.strategy == "grep"
    assert rep.gate.estimate.calls == 1


def test_gate_fanout_for_big_prose(tmp_path, fake_server):
    p = tmp_path / "meeting.txt"
    write_transcript(p, lines=6000)
    rep = run(p, "what did the team decide about the warehouse?", fake_server, dry_run=True)
    assert rep.corpus.kind == "transcript"
    assert rep.strategy == "fanout"
    assert rep.gate.estimate.calls > 2


# ------------------------------------------------------------------------------ strategies

def test_profile_finds_all_needles_with_exact_lines(big_log, fake_server):
    p, key = big_log
    fake_server.on("GroupJudgement", lambda req, text: {"label": "error", "summary": "odd lines"})
    rep = run(p, "anomalies?", fake_server)
    cited = {f.source.line_start for f in rep.findings if f.verified}
    assert {n["line"] for n in key["needles"]} <= cited
    by_line = {f.source.line_start: f for f in rep.findings}
    for n in key["needles"]:
        assert by_line[n["line"]].evidence == n["text"]
    story = [g for g in rep.groups if g["kind"] == "identifier"]
    assert len(story) == 1 and story[0]["key"] == key["session_id"]
    assert story[0]["lines"] == [n["line"] for n in key["needles"] if n["kind"] == "session"]
    assert "profiled by code" in rep.coverage.statement and rep.coverage.complete


def test_grep_answers_from_hits_without_fanout(big_log, fake_server):
    p, key = big_log
    txn = key["txn_ids"][1]
    fake_server.on("AnswerResult", answer_first_line)
    rep = run(p, f"what happened to {txn}?", fake_server)
    assert rep.strategy == "grep"
    assert len(fake_server.requests) == 1
    panic = next(n for n in key["needles"] if n["id"] == txn)
    assert [f.source.line_start for f in rep.findings] == [panic["line"]]
    assert "No fan-out was needed" in rep.answer


def test_direct_read_is_one_call(tmp_path, fake_server):
    p = tmp_path / "notes.txt"
    p.write_text("".join(f"note {i}: the quick brown fox\n" for i in range(1, 181)))
    fake_server.on("AnswerResult", answer_first_line)
    rep = run(p, "what is in the notes?", fake_server)
    assert rep.strategy == "direct" and len(fake_server.requests) == 1
    assert "no chunking or fan-out was needed" in rep.answer
    assert rep.coverage.lines_read_by_model == 180 and rep.coverage.complete


def test_fanout_reads_every_chunk_and_synthesises(tmp_path, fake_server):
    p = tmp_path / "prose.txt"
    lines = [f"Paragraph {i} talks about routine matters and nothing else at all." for i in range(3000)]
    lines[1234] = "The committee approved the PLANNED change to the schedule."
    p.write_text("\n".join(lines) + "\n")
    fake_server.on("MapResult", keyword_mapper("PLANNED"))
    fake_server.on("AnswerResult", lambda r, t: {"answer": "The committee approved a change.",
                                                 "cites": [1]})
    rep = run(p, "what did the committee do?", fake_server, concurrency=8)
    assert rep.strategy == "fanout"
    assert rep.coverage.chunks_ok == rep.coverage.chunks_total > 1
    assert [(f.source.line_start, f.verified) for f in rep.findings] == [(1235, True)]
    # code says what was found first, then the model's answer
    head, said = rep.answer.split("\n\n")[:2]
    assert head.startswith("**Found:** 1 verified finding") and ":1235" in head
    assert said == "The committee approved a change."
    synth = [r for r in fake_server.requests if r["schema_name"] == "AnswerResult"]
    assert len(synth) == 1 and "Paragraph" not in synth[0]["user_text"]  # clean prompt


# ------------------------------------------------------------------------------ failures

def _prose(tmp_path, n=2000, planted=None):
    lines = [f"Line {i} of ordinary prose about the weather and lunch plans." for i in range(1, n + 1)]
    for ln, text in (planted or {}).items():
        lines[ln - 1] = text
    p = tmp_path / "prose.txt"
    p.write_text("\n".join(lines) + "\n")
    return p


def test_failing_chunk_is_listed_with_range_and_reason(tmp_path, fake_server):
    p = _prose(tmp_path, planted={1500: "A POISONED line that the server always fails on."})
    fake_server.on("MapResult", keyword_mapper("nothing-matches"))
    fake_server.fault("POISONED", "500")
    rep = run(p, "what is said?", fake_server)
    assert not rep.coverage.complete
    [failed] = rep.coverage.chunks_failed
    assert failed.path == str(p) and failed.line_start <= 1500 <= failed.line_end
    assert "HTTP 500" in failed.reason
    assert failed.chunk in rep.coverage.statement and "INCOMPLETE" in rep.coverage.statement
    assert rep.coverage.chunks_ok == rep.coverage.chunks_total - 1


def test_quote_not_in_cited_lines_is_unverified(tmp_path, fake_server):
    p = _prose(tmp_path, planted={700: "The BUDGET was raised to 40k.", 1700: "The BUDGET fell."})
    fake_server.on("MapResult", keyword_mapper("BUDGET"))
    fake_server.on("AnswerResult", lambda r, t: {"answer": "The budget changed twice.", "cites": [1]})
    fake_server.fault("The BUDGET fell.", "badquote")
    rep = run(p, "what happened to the budget?", fake_server)
    by_line = {f.source.line_start: f for f in rep.findings}
    assert by_line[700].verified and not by_line[1700].verified
    assert "not found" in by_line[1700].note
    synth = [r for r in fake_server.requests if r["schema_name"] == "AnswerResult"][0]
    assert ":1700" not in synth["user_text"] and ":700" in synth["user_text"]
    from rlm.render import answer_markdown  # findings are data; Markdown shows them apart

    assert "Not verified (1)" in answer_markdown(rep) and "Not verified" not in rep.answer


def test_line_numbers_are_file_lines_including_last_line_without_newline(tmp_path, fake_server):
    lines = [f"filler line number {i} with some words" for i in range(1, 1001)]
    lines[-1] = "the very last line holds the MARKER"
    p = tmp_path / "nonl.txt"
    p.write_text("\n".join(lines))  # no trailing newline
    fake_server.on("MapResult", keyword_mapper("MARKER"))
    fake_server.on("AnswerResult", lambda r, t: {"answer": "It is on the last line.", "cites": [1]})
    rep = run(p, "where is it?", fake_server, context_tokens=2048, strategy="fanout")
    assert rep.coverage.chunks_total > 3
    [f] = rep.findings
    assert (f.source.line_start, f.source.line_end, f.verified) == (1000, 1000, True)
    assert f.evidence == "the very last line holds the MARKER"


# ------------------------------------------------------------------------------ reduce loop

def _many_findings(tmp_path, fake_server, merge):
    p = _prose(tmp_path, n=3000)
    usage = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}

    def mapper(req, text):
        found = [{"line": int(m.group(1)), "claim": f"Observation about line {m.group(1)} and "
                  f"its weather remark number {m.group(1)}", "quote": "ordinary prose"}
                 for m in list(NUMBERED.finditer(text))[:3]]
        return Reply(content=__import__("json").dumps({"findings": found}), usage=usage)

    fake_server.on("MapResult", mapper)
    fake_server.on("MergeResult", merge)
    fake_server.on("AnswerResult", lambda r, t: {"answer": "Many observations were made.",
                                                 "cites": [1]})
    return p


def test_reduce_stops_when_a_round_does_not_shrink(tmp_path, fake_server):
    def identity_merge(req, text):  # returns its input: every finding alone
        n = len(re.findall(r"^\[\d+\]", text, re.M))
        return {"groups": [{"ids": [i], "claim": "kept as is"} for i in range(1, n + 1)]}

    p = _many_findings(tmp_path, fake_server, identity_merge)
    rep = run(p, "what is observed?", fake_server, context_tokens=1024)
    map_findings = 3 * rep.coverage.chunks_total
    assert rep.reduce.stopped == "no_progress" and rep.reduce.rounds == 1
    assert len([f for f in rep.findings if f.verified]) == map_findings  # none lost
    assert rep.reduce.unmerged > 0 and "fit the synthesis prompt" in rep.coverage.statement


def test_reduce_stops_on_token_budget(tmp_path, fake_server):
    def should_not_run(req, text):
        raise AssertionError("merge must not be called once the budget is spent")

    p = _many_findings(tmp_path, fake_server, should_not_run)
    n_chunks = run(p, "q?", fake_server, context_tokens=1024, dry_run=True).coverage.chunks_total
    fake_server.reset()
    p = _many_findings(tmp_path, fake_server, should_not_run)
    # each map call really costs 110 tokens, but the hard cap reserves a request's worst case
    # (prompt estimate + max_tokens, ~1,100 here) before sending it: room for the last map call
    rep = run(p, "what is observed?", fake_server, context_tokens=1024, concurrency=1,
              max_tokens=110 * n_chunks + 1200)
    assert rep.reduce.stopped == "budget"
    assert rep.coverage.chunks_ok == n_chunks
    assert len([f for f in rep.findings if f.verified]) == 3 * n_chunks
    assert not [r for r in fake_server.requests if r["schema_name"] == "MergeResult"]


def test_sub_model_takes_the_map_calls_and_model_synthesises(tmp_path, fake_server):
    import json as _json

    from rlm.testing.cli import run_cli

    p = _prose(tmp_path, planted={900: "The MIGRATION finished on Tuesday."})
    fake_server.on("MapResult", keyword_mapper("MIGRATION"))
    fake_server.on("AnswerResult", lambda r, t: {"answer": "The migration finished.", "cites": [1]})
    r = run_cli("ask", str(p), "when did it finish?", "--base-url", fake_server.url, "--model",
                "big-one", "--sub-model", "small-one", "--json")
    assert r.returncode == 0, r.stderr
    models = {(q["schema_name"], q["body"]["model"]) for q in fake_server.requests}
    assert models == {("MapResult", "small-one"), ("AnswerResult", "big-one")}
    assert _json.loads(r.stdout)["findings"][0]["source"]["line_start"] == 900


def test_map_citations_go_through_the_one_evidence_rule(tmp_path, fake_server):
    """ask checks a map finding like audit and mine do (rlm.verify.evidence): a quote a few lines from
    its citation is corrected, one far away or outside the chunk is rejected; counts reported."""
    p = _prose(tmp_path, planted={700: "The BUDGET was raised to 40k.", 1200: "A KETTLE boiled."})

    def mapper(req, text):
        found = []
        for m in NUMBERED.finditer(text):
            ln = int(m.group(1))
            if "BUDGET" in m.group(2):  # cites 3 lines off: corrected back to 700
                found.append({"line": ln + 3, "claim": "the budget was raised", "quote": "BUDGET"})
            if "KETTLE" in m.group(2):  # cites 40 lines off: rejected
                found.append({"line": ln - 40, "claim": "a kettle boiled", "quote": "KETTLE"})
        return {"findings": found}

    fake_server.on("MapResult", mapper)
    fake_server.on("AnswerResult", lambda r, t: {"answer": "The budget was raised.", "cites": [1]})
    rep = run(p, "what happened?", fake_server, strategy="fanout")
    by_claim = {f.claim: f for f in rep.findings}
    budget, kettle = by_claim["the budget was raised"], by_claim["a kettle boiled"]
    assert (budget.source.line_start, budget.verified) == (700, True)
    assert "quote found at" in budget.note and budget.evidence == "The BUDGET was raised to 40k."
    assert not kettle.verified and "not found" in kettle.note
    assert (rep.evidence.verified, rep.evidence.corrected, rep.evidence.rejected) == (0, 1, 1)


def test_the_json_answer_is_the_answer_and_markdown_renders_the_rest(tmp_path, fake_server):
    """The report's answer is the model's words and code's notes; findings, evidence counts and
    coverage are data that rlm.render draws (they are not copied into the answer)."""
    from rlm.render import answer_markdown, report_markdown

    p = _prose(tmp_path, planted={700: "The BUDGET was raised to 40k."})
    fake_server.on("MapResult", keyword_mapper("BUDGET"))
    fake_server.on("AnswerResult", lambda r, t: {"answer": "The budget was raised.", "cites": [1]})
    rep = run(p, "what happened to the budget?", fake_server, strategy="fanout")
    assert rep.answer == (f"**Found:** 1 verified finding (`{p}:700`).\n\nThe budget was raised."
                          "\n\nRead as: an open question (what stands out), whole file.")
    md = answer_markdown(rep)
    assert md.startswith(rep.answer) and "### Verified findings (1)" in md
    assert rep.coverage.statement in md and "Evidence checked by code: 1 verified" in md
    assert "## Answer" in report_markdown(rep) and md in report_markdown(rep)
