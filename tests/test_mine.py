"""`rlm mine`: scoping by code, verified vs inferred facts, placeholders — against the real
fake HTTP server."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import httpx
from typer.testing import CliRunner

from tests import repo_responders as R
from rlm.cli import app
from rlm.corpus.walk import walk
from rlm.fixtures.repo import write_repo
from rlm.repo.mine import MineOptions, keywords, mine, mine_markdown, stem


def _ep(ep: str) -> tuple[str, int, int]:
    path, _, rng = ep.rpartition(":")
    a, _, b = rng.partition("-")
    return path, int(a), int(b or a)


def _oracle(key: dict):
    """A competent model: for the question asked, it picks the shown lines holding the planted
    answer, and (wrongly, on purpose) any shown line of documentation making a false claim."""
    answer = {f["question"]: f["quote"] for f in key["facts"]}
    false_lines = {c["text"].strip() for c in key["false_doc_claims"]}

    def respond(req, text):
        q = R.field(text, "Question")
        picks = []
        for n, path, t in R.candidate_rows(text):
            if (answer.get(q) and answer[q] in t) or t.strip() in false_lines:
                picks.append({"n": n, "claim": f"{path} says {t.strip()[:100]}"})
        return {"picks": picks[:3]}

    return respond


def _check(root: Path, rep) -> None:
    for q in rep.questions:
        assert not (q.verified and q.placeholder)
        for f in q.verified + q.inferred:
            path, a, b = _ep(f.evidence_path)
            R.assert_evidence(root, path, a, b, f.quote)
        for f in q.verified:
            assert f.confidence == "verified" and f.basis == "code"
        for f in q.inferred:
            assert f.confidence == "inferred" and (f.basis in ("docs", "names")
                                                   or "does not support the claim" in f.note)
    fc = rep.files
    assert fc.total == walk(root).listed_files
    assert fc.read_by_model + fc.scanned_by_code + fc.failed + fc.skipped == fc.total and fc.adds_up


def test_mine_fixture(fake_server, tmp_path):
    root = tmp_path / "repo"
    key = write_repo(root)
    fake_server.on("PickResult", _oracle(key))
    questions = [f["question"] for f in key["facts"]] + key["unanswerable_questions"]
    rep = mine(str(root), questions, MineOptions(model="fake", base_url=fake_server.url))
    _check(root, rep)
    by_q = {q.question: q for q in rep.questions}
    for fact in key["facts"]:
        q = by_q[fact["question"]]
        assert q.placeholder is None, fact["id"]
        hits = [f for f in q.verified if _ep(f.evidence_path)[0] == fact["path"]
                and fact["quote"] in f.quote]
        assert hits, (fact["id"], q.scope)
        assert "no fan-out was needed" in q.scope and q.calls == 1
    false_refs = {(c["path"], c["line"]) for c in key["false_doc_claims"]}
    inferred_refs = set()
    for q in rep.questions:
        for f in q.verified:
            p, a, b = _ep(f.evidence_path)
            assert not p.endswith(".md") and (p, a) not in false_refs
        for f in q.inferred:
            p, a, _ = _ep(f.evidence_path)
            inferred_refs.add((p, a))
    assert inferred_refs & false_refs  # the docs' claims were picked, and kept apart as inferred
    for uq in key["unanswerable_questions"]:
        q = by_q[uq]
        assert q.placeholder == f"[fact: {uq}]" and not q.verified
    md = mine_markdown(rep)
    for uq in key["unanswerable_questions"]:
        assert f"`[fact: {uq}]`" in md
    assert "| # | Claim | Evidence | Quote (from the file) |" in md
    assert ("**Inferred** (rests on names or documentation, or the line does not carry the "
            "claim; not verified)") in md
    # the real strategy: code scoped each question; each then got one call (or none to make)
    assert rep.strategy == "scoped" and rep.coverage.complete
    assert {q.strategy for q in rep.questions} <= {"one_call", "code_only"}
    assert all((q.strategy == "one_call") == (q.calls == 1) for q in rep.questions)
    assert rep.evidence.verified >= len(key["facts"]) and rep.evidence.rejected == 0
    # a question no keyword matches costs no call
    assert len(fake_server.requests) == sum(q.calls for q in rep.questions)


def test_mine_rejects_bad_picks(fake_server, tmp_path):
    root = tmp_path / "repo"
    key = write_repo(root)

    def bad(req, text):
        return {"picks": [{"n": 9999, "claim": "a number that was not shown"},
                          {"n": 0, "claim": "numbers start at 1"}]}

    fake_server.on("PickResult", bad)
    q = key["facts"][0]["question"]
    rep = mine(str(root), [q], MineOptions(model="fake", base_url=fake_server.url))
    [res] = rep.questions
    assert not res.verified and not res.inferred
    assert res.placeholder == f"[fact: {q}]"
    assert len(res.rejected) == 2 and rep.evidence.rejected == 2
    reasons = " ".join(x["reason"] for x in res.rejected)
    assert reasons.count("which was not shown") == 2


def test_mine_fans_out_over_many_files(fake_server, tmp_path):
    root = tmp_path / "repo"
    key = write_repo(root)
    fake_server.on("PickResult", _oracle(key))
    fact = key["facts"][0]
    rep = mine(str(root), [fact["question"]],
               MineOptions(model="fake", base_url=fake_server.url, one_call_max_files=3,
                           chunk_chars=1500))
    [q] = rep.questions
    assert q.fanout and q.calls > 1 and "fan-out" in q.scope
    assert q.strategy == "fanout" and rep.strategy == "scoped"
    assert any(fact["quote"] in f.quote for f in q.verified)
    _check(root, rep)


def test_mine_cli(fake_server, tmp_path):
    root = tmp_path / "repo"
    key = write_repo(root)
    fake_server.on("PickResult", _oracle(key))
    runner = CliRunner()
    base = ["mine", str(root), key["facts"][1]["question"], key["unanswerable_questions"][0],
            "--model", "fake", "--base-url", fake_server.url, "--quiet"]
    r = runner.invoke(app, base + ["--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["command"] == "mine" and len(data["questions"]) == 2
    assert data["questions"][0]["verified"] and data["questions"][1]["placeholder"]
    n = len(fake_server.requests)
    r = runner.invoke(app, base + ["--dry-run"])
    assert r.exit_code == 0 and len(fake_server.requests) == n
    fake_server.fault("Question:", "500")
    r = runner.invoke(app, base + ["--no-cache"])  # the cache would answer without the server
    assert r.exit_code == 3, r.output
    assert runner.invoke(app, ["mine", str(root), "  ", "--model", "fake", "--base-url",
                               fake_server.url]).exit_code == 2


def test_keywords_and_stems():
    assert stem("retries") == "retr" and stem("retry") == "retr" and stem("hashed") == "hash"
    assert stem("invoices") == "invoice" and stem("processes") == "process"
    kws = {k.word: k for k in keywords("What is the maximum page-size for listing orders?")}
    assert set(kws) >= {"maximum", "page-size", "page", "size", "listing", "orders"}
    assert "what" not in kws and kws["maximum"].hits("max_page_size = 200")
    assert keywords("What VAT rate?")[0].hits("vat_rate = 0.2")
    assert not keywords("What VAT rate?")[0].hits("private = 1")


def test_mine_on_httpx_source(fake_server, tmp_path):
    """A real repository nobody here wrote: the installed httpx package, copied."""
    root = tmp_path / "httpx"
    shutil.copytree(Path(httpx.__file__).parent, root)
    fake_server.on("PickResult", R.keyword_pick)
    questions = ["What is the default timeout?", "How many redirects are followed at most?",
                 "Which proxy environment variables are read?",
                 "Which GPU kernels accelerate blockchain mining?"]
    rep = mine(str(root), questions, MineOptions(model="fake", base_url=fake_server.url))
    _check(root, rep)
    assert sum(len(q.verified) for q in rep.questions) >= 3
    last = rep.questions[-1]
    assert last.placeholder is not None and last.calls == 0 and "no model call" in last.scope
    assert rep.coverage.complete
    assert all(re.match(r"^[^/].*:\d+(-\d+)?$", f.evidence_path)
               for q in rep.questions for f in q.verified)


def test_mine_weak_model_claims_must_mention_the_line(fake_server, tmp_path):
    root = tmp_path / "repo"
    key = write_repo(root)
    fact = key["facts"][0]  # MAX_RETRIES = N

    def respond(req, text):
        rows = [r for r in R.candidate_rows(text) if fact["quote"] in r[2]]
        n = rows[0][0]
        return {"picks": [{"n": n, "claim": "retry_retry_retry_retry"},
                          {"n": n, "claim": "MAX_RETRIES is the retry limit"}]}

    fake_server.on("PickResult", respond)
    rep = mine(str(root), [fact["question"]],
               MineOptions(model="fake", base_url=fake_server.url, weak_model=True))
    [q] = rep.questions
    assert [f.claim for f in q.verified] == ["MAX_RETRIES is the retry limit"]
    assert any("weak model" in x["reason"] for x in q.rejected)


def test_mine_claim_its_line_does_not_carry_is_inferred_not_verified(fake_server, tmp_path):
    """Code quotes a picked line, so the quote is always real; the claim is the model's. One the
    line does not carry (a wrong figure on a line using VAT_RATE) is kept as inferred, with the
    reason."""
    root = tmp_path / "repo"
    key = write_repo(root)
    fact = next(f for f in key["facts"] if f["id"] == "vat_rate")

    def respond(req, text):
        rows = R.candidate_rows(text)
        true = [n for n, _, t in rows if fact["quote"] in t]
        other = [n for n, _, t in rows if t.strip().startswith("vat = (subtotal * VAT_RATE)")]
        return {"picks": [{"n": true[0], "claim": fact["claim"]},
                          {"n": other[0], "claim": "Invoices apply a VAT rate of 0.25."}]}

    fake_server.on("PickResult", respond)
    rep = mine(str(root), [fact["question"]], MineOptions(model="fake", base_url=fake_server.url))
    _check(root, rep)
    q = rep.questions[0]
    assert [f.claim for f in q.verified] == [fact["claim"]]
    assert [f.claim for f in q.inferred] == ["Invoices apply a VAT rate of 0.25."]
    assert "does not support the claim" in q.inferred[0].note
    assert "0.25" in mine_markdown(rep).split("**Inferred**")[1]
