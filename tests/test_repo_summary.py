"""`--summary` on audit and mine: ask's guarded reduce and synthesis over the verified findings
only, worded by the repository recipes' own prompts — against the real fake HTTP server."""

from __future__ import annotations

import json
import re

import anyio
from typer.testing import CliRunner

from tests import repo_responders as R
from rlm.testing import prompt_text
from rlm.repo.audit import AuditOptions, audit
from rlm.cli import app
from rlm.engine.budget import Budget
from rlm.fixtures.repo import write_repo
from rlm.models.openai_compat import OpenAICompatModel, reset_mode_cache
from rlm.repo.summary import summarize
from rlm.schemas.report import Finding, Source

FINDING = re.compile(r"^\[(\d+)\] (.*) \((\S+):(\d+)-(\d+)\)$", re.M)


def _serve_audit(server) -> None:
    server.on("ModuleResult", R.good_module)
    server.on("PickResult", R.good_pick)
    server.on("RiskPickResult", R.good_risk_pick)


def _faithful_summary(req, text):
    """Names the first two findings' places and cites them: everything it says is in them."""
    rows = FINDING.findall(text)
    return {"answer": "; ".join(f"{p}:{a} — {c[:60]}" for _n, c, p, a, _b in rows[:2]),
            "cites": [1, 2][:len(rows)]}


def _synth_requests(server, recipe_words: str) -> list[dict]:
    return [r for r in server.requests if recipe_words in prompt_text(r["body"])]


def test_audit_summary_uses_the_repo_recipe_and_only_verified_findings(fake_server, tmp_path):
    root = tmp_path / "repo"
    write_repo(root)
    _serve_audit(fake_server)
    fake_server.on("AnswerResult", _faithful_summary)
    plain = audit(str(root), AuditOptions(model="fake", base_url=fake_server.url, no_cache=True))
    assert plain.summary is None
    assert not _synth_requests(fake_server, "You summarise a repository audit")
    n_plain = len(fake_server.requests)

    rep = audit(str(root), AuditOptions(model="fake", base_url=fake_server.url, no_cache=True,
                                        summary=True))
    sent = _synth_requests(fake_server, "You summarise a repository audit")
    assert len(sent) == 1 and len(fake_server.requests) > n_plain
    shown = prompt_text(sent[0]["body"])
    verified = {f.evidence_path for f in rep.findings if f.verified}
    for _n, _c, p, a, b in FINDING.findall(shown):  # only verified findings reach the prompt
        assert (f"{p}:{a}" if a == b else f"{p}:{a}-{b}") in verified
    assert rep.summary and rep.summary_cites
    assert set(rep.summary_cites) <= verified
    # the summary is extra: the findings are the ones the audit found without it
    assert sorted(f.evidence_path for f in rep.findings if f.verified) == \
        sorted(f.evidence_path for f in plain.findings if f.verified)
    assert rep.coverage.complete


def test_a_summary_that_invents_a_number_is_withheld_and_said(fake_server, tmp_path):
    root = tmp_path / "repo"
    write_repo(root)
    _serve_audit(fake_server)
    fake_server.on("AnswerResult", lambda r, t: {"answer": "It retries 9731 times.",
                                                 "cites": [1]})
    rep = audit(str(root), AuditOptions(model="fake", base_url=fake_server.url, summary=True))
    assert rep.summary is None
    assert any("summary withheld" in d and "9731" in d for d in rep.coverage.declared)
    assert "9731" in rep.coverage.statement or any("9731" in d for d in rep.coverage.declared)
    assert any(f.verified for f in rep.findings)  # the findings stand


def _finding(i: int, claim: str) -> Finding:
    return Finding(id=f"f{i}", claim=claim, evidence=claim, verified=True,
                   source=Source(path=f"pkg/m{i}.py", line_start=i, line_end=i))


def test_summary_merges_with_the_guarded_reduce_when_findings_do_not_fit(fake_server):
    fs = [_finding(i, f"Setting NUM_{i} is {i * 7} seconds in module m{i} of the package")
          for i in range(1, 41)]
    merges = []

    def merge(req, text):
        rows = FINDING.findall(text)
        merges.append(len(rows))
        ids = [int(n) for n, *_ in rows]
        if len(merges) == 1:  # first batch: a merge that drops numbers is refused by code
            return {"groups": [{"ids": ids[:2], "claim": "Two settings exist."}]}
        half = len(ids) // 2
        return {"groups": [{"ids": ids[:half], "claim": " ; ".join(c for _n, c, *_ in rows[:half])}]}

    fake_server.on("MergeResult", merge)
    fake_server.on("AnswerResult", _faithful_summary)

    async def go():
        reset_mode_cache()
        model = OpenAICompatModel("fake", fake_server.url, context_tokens=8192, timeout=5,
                                  max_attempts=1)
        try:
            return await summarize(model, "what is configured?", fs, recipe_name="repo-audit",
                                   budget=Budget(None, None, None), window_tokens=300, timeout=5)
        finally:
            await model.aclose()

    s = anyio.run(go)
    merge_reqs = _synth_requests(fake_server, "You merge findings of a repository audit")
    assert merge_reqs and merges  # the repo recipe's merge prompt, not ask's
    assert s.reduce is not None and s.reduce.rounds >= 1
    assert any("refused a merge" in m and "dropped" in m for m in s.reduce.log)
    assert s.text and s.cites and all(c.startswith("pkg/m") for c in s.cites)


def test_mine_summary_per_question_and_code_only_says_it_needs_a_model(fake_server, tmp_path):
    root = tmp_path / "repo"
    key = write_repo(root)
    answer = {f["question"]: f["quote"] for f in key["facts"]}

    def pick(req, text):
        q = R.field(text, "Question")
        return {"picks": [{"n": n, "claim": f"{path} says {t.strip()[:100]}"}
                          for n, path, t in R.candidate_rows(text)
                          if answer.get(q) and answer[q] in t][:3]}

    fake_server.on("PickResult", pick)
    fake_server.on("AnswerResult", _faithful_summary)
    q = key["facts"][1]["question"]
    runner = CliRunner()
    r = runner.invoke(app, ["mine", str(root), q, "--model", "fake", "--base-url",
                            fake_server.url, "--quiet", "--json", "--summary"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    q1 = data["questions"][0]
    assert q1["verified"] and q1["summary"]
    assert set(q1["summary_cites"]) <= {f["evidence_path"] for f in q1["verified"]}
    assert _synth_requests(fake_server, "You answer a question about a code repository from "
                                        "verified facts")

    r = runner.invoke(app, ["mine", str(root), q, "--model", "none", "--quiet", "--json",
                            "--summary"])
    data = json.loads(r.stdout)
    assert data["questions"][0]["summary"] is None
    assert any("--summary needs a model" in d for d in data["coverage"]["declared"])
