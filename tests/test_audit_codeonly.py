"""`rlm audit` with no model: complete from code alone (rlm.repo.facts through rlm.verify.evidence),
and with a model the code facts come first and stay. Real subprocesses, no model configured."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from fixtures.repo import write_repo
from rlm.models.none import NOTICE
from rlm.testing.cli import run_cli  # in-process: a process per call costs seconds


def rlm(*args, timeout=120):
    env = {k: v for k, v in os.environ.items() if k not in ("RLM_MODEL", "RLM_BASE_URL")}
    return run_cli(*args, env=env)


def test_audit_with_no_model_is_complete_from_code(tmp_path):
    root = tmp_path / "repo"
    key = write_repo(root)
    r = rlm("audit", str(root), "--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["usage"]["calls"] == 0 and rep["audit"]["stopped"] == "no_model"
    assert rep["coverage"]["complete"] and NOTICE in rep["coverage"]["statement"]
    assert rep["answer"].startswith(NOTICE)
    assert not rep["coverage"]["gaps"] and not rep["coverage"]["chunks_failed"]
    # every finding: verified, its evidence is the file's own text at the cited line
    for f in rep["findings"]:
        assert f["verified"] and f["status"] == "verified" and f["chunk"] == "code"
        lines = (root / f["source"]["path"]).read_text("utf-8").splitlines()
        assert f["evidence"].splitlines()[0] == lines[f["source"]["line_start"] - 1]
    # the key's entry points, risky call and TODO, at their lines
    by_line = {(f["source"]["path"], f["source"]["line_start"]): f for f in rep["findings"]}
    for cf in key["code_facts"]:
        f = by_line.get((cf["path"], cf["line"]))
        assert f is not None and f["label"] == cf["kind"], cf
        assert cf["quote"] in f["evidence"]
    weak = by_line[("parcelpost/accounts/passwords.py", 12)]
    assert weak["kind"] == "risk" and weak["severity"] == "high"  # bandit's B324 level
    assert weak["claim"].startswith("S324") and "bandit B324" in weak["note"]
    # the whole-repository views of the fixture: its console script, graph and public API
    v = rep["views"]
    assert ("console_script", "parcelpost") in {(e["kind"], e["name"])
                                                for e in v["entry_points"]["items"]}
    ids = {n["id"] for n in v["graph"]["nodes"]}
    assert {"parcelpost.cli", "parcelpost.accounts.passwords"} <= ids
    assert not [n for n in ids if n.startswith(("vendor", "tinyjson"))]  # the walker's choice
    assert v["public_api"]["packages"][0]["package"] == "parcelpost"
    labels = {f["label"] for f in rep["findings"]}
    assert {"entry_point", "test", "large_function", "marker", "risk"} <= labels
    # nothing from vendored or ignored code; the module map has code's key APIs
    assert not [f for f in rep["findings"]
                if f["source"]["path"].startswith(("vendor/", "build/", "node_modules/"))]
    mods = {m["name"]: m for m in rep["audit"]["modules"]}
    assert "hash_password" in mods["parcelpost/accounts"]["key_apis"]
    assert mods["parcelpost"]["findings"] > 0


def test_audit_markdown_with_no_model_says_so(tmp_path):
    root = tmp_path / "repo"
    write_repo(root)
    r = rlm("audit", str(root))
    assert r.returncode == 0, r.stderr
    assert NOTICE in r.stdout and "## Findings by module" in r.stdout
    assert "TODO: rotate the log file" in r.stdout


def test_code_facts_stay_first_when_a_model_runs(fake_server, tmp_path):
    from rlm.repo.audit import AuditOptions, audit
    from rlm.models.openai_compat import OpenAICompatModel, reset_mode_cache

    root = tmp_path / "repo"
    key = write_repo(root)
    reset_mode_cache()
    model = OpenAICompatModel("fake", fake_server.url, context_tokens=8192, timeout=5.0,
                              max_attempts=1, backoff_base=0.01)
    rep = audit(str(root), AuditOptions(max_rounds=2), model=model)
    code = [f for f in rep.findings if f.chunk == "code"]
    assert code and all(f.round == 0 and f.verified for f in code)
    assert rep.findings[:len(code)] == code  # first, whatever the model rounds did
    got = {(f.source.path, f.source.line_start) for f in code}
    assert {(cf["path"], cf["line"]) for cf in key["code_facts"]} <= got
    assert rep.usage.calls > 0  # the model rounds ran (and failed or added)


# ------------------------------------------------------------------------------- mine, code only

CANONICAL = "what already works and must not be touched?"


def test_mine_canonical_question_with_no_model_is_verified_facts(tmp_path):
    root = tmp_path / "repo"
    write_repo(root)
    r = rlm("mine", str(root), CANONICAL, "--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    q = rep["questions"][0]
    assert rep["usage"]["calls"] == 0 and rep["coverage"]["complete"] and not q["placeholder"]
    assert rep["evidence"]["verified"] == len(q["verified"]) > 0
    for f in q["verified"]:  # each evidence path points at real lines holding the quote
        path, _, rng = f["evidence_path"].rpartition(":")
        a, _, b = rng.partition("-")
        lines = (root / path).read_text("utf-8").splitlines()
        assert f["quote"] == "\n".join(lines[int(a) - 1:int(b or a)]).strip()[:300]
    claims = [f["claim"] for f in q["verified"]]
    pinned = [f for f in q["verified"] if f["test"].endswith("::test_create_and_list")]
    assert {f["claim"].split("`")[1] for f in pinned} >= {"create_order",
                                                          "list_orders"}
    assert all(f["evidence_path"].startswith("tests/test_orders.py:") for f in pinned)
    assert any("`hash_password`" in c for c in claims)  # public API
    assert any(c.startswith("documented command: `parcelpost serve") for c in claims)
    assert not any("vendor/" in f["evidence_path"] for f in q["verified"])


def test_mine_free_question_with_no_model_ranks_files_and_keeps_a_placeholder(tmp_path):
    root = tmp_path / "repo"
    write_repo(root)
    q2 = "How long does a login session stay valid before it expires?"
    r = rlm("mine", str(root), CANONICAL, q2, "--json")
    assert r.returncode == 3, r.stderr  # reading was needed and nothing read it
    rep = json.loads(r.stdout)
    free = rep["questions"][1]
    assert free["placeholder"] == f"[fact: {q2}]" and not free["verified"]
    assert free["strategy"] == "code_only" and "BM25" in free["scope"]
    # BM25 over names, identifiers and docstrings (every question term, by rarity) puts the
    # sessions module near the top
    assert "parcelpost/accounts/sessions.py" in free["relevant_files"][:3]
    # and the definitions in the ranked files that the question's words name, with their place
    assert any(d.startswith("`open_session` (parcelpost/accounts/sessions.py:")
               for d in free["definitions"])
    assert not rep["coverage"]["complete"]
    assert any(g.startswith("Q2 needs a model") for g in rep["coverage"]["gaps"])
    assert rep["questions"][0]["verified"]  # the canonical answer stays
