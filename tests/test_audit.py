"""`rlm audit`: rounds, checked evidence, coverage — against the real fake HTTP server."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from tests import repo_responders as R
from rlm.repo.audit import AuditOptions, audit, audit_markdown, parse_lenses
from rlm.cli import app
from rlm.corpus.walk import walk
from rlm.errors import UsageError
from rlm.fixtures.repo import write_repo
from rlm.repo.chunks import chunk_files
from rlm.repo.split import split_file


def _serve_good(server) -> None:
    server.on("ModuleResult", R.good_module)
    server.on("PickResult", R.good_pick)
    server.on("RiskPickResult", R.good_risk_pick)


def _opts(server, **kw) -> AuditOptions:
    kw.setdefault("concurrency", 8)
    return AuditOptions(model="fake", base_url=server.url, **kw)


def _check_report(root: Path, rep) -> None:
    """Every verified/corrected finding resolves and its quote and evidence are in the file;
    the file coverage adds up to the walker's count."""
    for f in rep.findings:
        if f.status == "rejected":
            assert not f.verified
            continue
        s = f.source
        R.assert_evidence(root, s.path, s.line_start, s.line_end, f.quote or f.evidence)
        R.assert_evidence(root, s.path, s.line_start, s.line_end, f.evidence.split("\n")[0])
        assert f.evidence_path == (f"{s.path}:{s.line_start}" if s.line_start == s.line_end
                                   else f"{s.path}:{s.line_start}-{s.line_end}")
    fc = rep.files
    w = walk(root)
    assert fc.total == w.listed_files
    assert fc.read_by_model + fc.scanned_by_code + fc.failed + fc.skipped == fc.total
    assert fc.adds_up
    ev = rep.audit.evidence
    assert ev.rejected >= sum(1 for f in rep.findings if f.status == "rejected")


def test_audit_fixture_finds_planted_facts(fake_server, tmp_path):
    root = tmp_path / "repo"
    key = write_repo(root)
    _serve_good(fake_server)
    rep = audit(str(root), _opts(fake_server))
    _check_report(root, rep)
    good = [f for f in rep.findings if f.status != "rejected"]
    for fact in key["facts"]:
        hits = [f for f in good if f.kind in ("fact", "risk") and f.verified
                and f.source.path == fact["path"]
                and f.source.line_start <= fact["line_end"] and fact["line_start"] <= f.source.line_end]
        assert hits, f"planted fact {fact['id']} not found"
    # the docs' false claims are never verified facts
    doc_files = {c["path"] for c in key["false_doc_claims"]}
    assert not [f for f in good if f.verified and f.source.path in doc_files]
    for f in good:
        if f.source.path in doc_files:
            assert f.kind == "doc" and not f.verified
    assert any(f.kind == "doc" for f in good)
    # nothing from vendored or ignored code
    assert not [f for f in rep.findings if f.source.path.startswith(("vendor/", "build/", "node_modules/"))]
    a = rep.audit
    assert a.stopped in ("no_progress", "nothing_left") and a.stop_reason
    assert [r.round for r in a.rounds] == list(range(1, len(a.rounds) + 1))
    assert a.rounds[0].work[0].startswith("module map")
    assert any("lens risks" in w for w in a.rounds[1].work)
    assert rep.coverage.complete and rep.files.failed == 0
    assert rep.files.skipped_by_reason.get("binary") == 2
    mods = {m.name: m for m in a.modules}
    assert "NoSuchApiAnywhere" not in mods["parcelpost/accounts"].key_apis  # code drops invented names
    assert "hash_password" in mods["parcelpost/accounts"].key_apis
    assert "tests/test_ratelimit.py" in mods["parcelpost/net"].tested_by
    md = audit_markdown(rep)
    for part in ("## Module map", "## Findings by module", "## Risks, ranked", "## Coverage",
                 "[`parcelpost/accounts/passwords.py:12`](parcelpost/accounts/passwords.py#L12)"):
        assert part in md
    # the seen-set: no two findings of one kind overlap in one file
    for i, f in enumerate(good):
        for g in good[i + 1:]:
            assert not (f.kind == g.kind and f.source.path == g.source.path
                        and f.source.line_start <= g.source.line_end
                        and g.source.line_start <= f.source.line_end)


def test_audit_weak_model_mode(fake_server, tmp_path):
    """Weak-model mode (chosen for the embedded model): round 1 only maps the modules; the lines
    code's rules select are the findings, quoted by code; the model phrases claims, which are
    used only when they mention the line."""
    root = tmp_path / "repo"
    key = write_repo(root)

    def phrase(req, text):
        claims = []
        for i, (n, path, t) in enumerate(R.candidate_rows(text)):
            # every other claim is junk that must be replaced by code's claim
            claims.append({"n": n, "claim": f"sets {t.split()[0]}" if i % 2 == 0
                           else "purchase_purchase_purchase_purchase"})
        return {"claims": claims[:6]}

    fake_server.on("ModuleBrief", lambda req, text: {"purpose": "some code", "key_apis": ["Order"]})
    fake_server.on("PhraseResult", phrase)
    fake_server.on("PickResult", lambda req, text: {"picks": []})
    rep = audit(str(root), _opts(fake_server, weak_model=True))
    _check_report(root, rep)
    assert rep.audit.rounds[0].new == 0
    assert any("weak model" in r for r in rep.gate.reasons)
    good = [f for f in rep.findings if f.verified]
    for fact in key["facts"]:
        assert [f for f in good if f.source.path == fact["path"]
                and f.source.line_start <= fact["line_end"]
                and fact["line_start"] <= f.source.line_end], fact["id"]
    assert not [f for f in good if "purchase_purchase" in f.claim]
    assert [f for f in good if f.note and f.note.endswith("claim written by code")]
    assert [f for f in good if f.note and f.note.endswith("claim phrased by the model")]
    sha1 = [f for f in good if "hashlib.sha1" in f.evidence]
    assert sha1 and sha1[0].kind == "risk" and sha1[0].severity == "high"
    names = {r["schema_name"] for r in fake_server.requests}
    assert {"ModuleBrief", "PhraseResult"} <= names and "ModuleResult" not in names


def test_audit_rejects_bad_citations_then_digs(fake_server, tmp_path):
    root = tmp_path / "repo"
    write_repo(root)
    (tmp_path / "outside.py").write_text("secret = 1\n")
    fake_server.on("ModuleResult", R.bad_module)
    fake_server.on("PickResult", R.good_pick)
    fake_server.on("RiskPickResult", R.good_risk_pick)
    rep = audit(str(root), _opts(fake_server))
    _check_report(root, rep)
    rejected = [f for f in rep.findings if f.status == "rejected"]
    round1_calls = rep.audit.rounds[0].calls
    assert len([f for f in rejected if f.round == 1]) == 6 * round1_calls
    reasons = " ".join(f.note for f in rejected)
    for why in ("'..' is not accepted", "absolute paths are not accepted", "does not exist",
                "quote not found", "no such file", "was not shown to this call"):
        assert why in reasons, why
    assert rep.audit.rounds[0].new == 0
    assert any(w.startswith("recheck") for w in rep.audit.rounds[1].work)
    # rechecks and lenses recover verified findings whose quotes come from the files
    rechecked = [f for f in rep.findings if f.status != "rejected" and f.note
                 and f.note.startswith("re-found")]
    assert rechecked
    assert not [f for f in rep.findings if f.verified and f.source.path.startswith(("/", ".."))]


def test_audit_budget_stop_is_reported(fake_server, tmp_path):
    root = tmp_path / "repo"
    write_repo(root)
    _serve_good(fake_server)
    rep = audit(str(root), _opts(fake_server, max_calls=3, module_max_files=4,
                                          concurrency=1))
    assert rep.audit.stopped == "budget"
    assert "call budget" in rep.audit.stop_reason
    assert not rep.coverage.complete and rep.coverage.chunks_failed
    assert rep.files.failed > 0 and rep.files.adds_up
    assert len(fake_server.requests) == 3
    assert "INCOMPLETE" in rep.coverage.statement


def test_audit_cli(fake_server, tmp_path):
    root = tmp_path / "repo"
    write_repo(root)
    _serve_good(fake_server)
    runner = CliRunner()
    out = tmp_path / "report" / "audit.md"
    out.parent.mkdir()
    base = ["audit", str(root), "--model", "fake", "--base-url", fake_server.url, "--quiet"]
    r = runner.invoke(app, base + ["--json", "--out", str(out), "--lens", "risks,tests"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["command"] == "audit" and data["audit"]["lenses"] == ["risks", "tests"]
    assert data["coverage"]["complete"] is True
    md = out.read_text()
    assert md.startswith("# rlm audit") and "](../repo/parcelpost/" in md  # links relative to --out
    n = len(fake_server.requests)
    r = runner.invoke(app, base + ["--dry-run"])
    assert r.exit_code == 0 and "Dry run" in r.stdout and len(fake_server.requests) == n
    r = runner.invoke(app, base + ["--max-calls", "2"])
    assert r.exit_code == 3, r.output
    assert runner.invoke(app, base + ["--lens", "bogus"]).exit_code == 2
    assert runner.invoke(app, ["audit", str(tmp_path / "nope"), "--model", "fake", "--base-url",
                               fake_server.url]).exit_code == 2


def test_parse_lenses():
    assert parse_lenses(None) == ("structure", "risks", "tests")
    assert parse_lenses("tests, risks,tests") == ("tests", "risks")
    with pytest.raises(UsageError):
        parse_lenses("style")


def test_audit_on_httpx_source(fake_server, tmp_path):
    """A real repository nobody here wrote: the installed httpx package, copied."""
    root = tmp_path / "httpx"
    shutil.copytree(Path(httpx.__file__).parent, root)
    _serve_good(fake_server)
    rep = audit(str(root), _opts(fake_server))
    _check_report(root, rep)
    good = [f for f in rep.findings if f.verified]
    assert len(good) >= 10
    assert rep.audit.stopped in ("no_progress", "nothing_left", "max_rounds")
    assert rep.files.read_by_model == len([f for f in walk(root).files if f.size])
    assert rep.coverage.complete
    # big files were split on def/class boundaries, every part read
    assert rep.coverage.lines_read_by_model == rep.corpus.lines


# ------------------------------------------------------------------------------ chunking


def test_split_python_on_definitions():
    src = ['"""Doc."""', "import os", ""]
    for i in range(30):
        src += [f"def f{i}(x):", f"    y = x + {i}", "    return y", ""]
    src += ["class Big:"] + [f"    def m{i}(self):\n        return {i}\n".rstrip("\n")
                             for i in range(40)]
    lines = "\n".join(src).split("\n")
    ranges, how = split_file("m.py", lines, 600)
    assert how == "ast"
    assert ranges[0][0] == 1 and ranges[-1][1] == len(lines)
    for (a, b), (c, d) in zip(ranges, ranges[1:]):
        assert c == b + 1
    starts = {a for a, _ in ranges[1:]}
    assert all(lines[a - 1].lstrip().startswith(("def ", "class ")) for a in starts), \
        [lines[a - 1] for a in starts]
    assert any(lines[a - 1].startswith("    def m") for a in starts)  # a big class splits by methods


def test_split_regex_and_lines():
    js = []
    for i in range(40):
        js += [f"// helper {i}", f"export function f{i}(a) {{", f"  return a + {i};", "}", ""]
    ranges, how = split_file("a.js", js, 500)
    assert how == "declarations"
    assert all(js[a - 1].startswith("// helper") for a, _ in ranges[1:])
    txt = [f"line {i}" for i in range(300)]
    ranges, how = split_file("notes.txt", txt, 400)
    assert how == "lines" and ranges[-1][1] == 300


def test_chunk_text_carries_line_numbers(tmp_path):
    (tmp_path / "a.py").write_text("X = 1\n\ndef f():\n    return X\n")
    (tmp_path / "b.py").write_text("Y = 2\n")
    [ch] = chunk_files(tmp_path, "(root)", ["a.py", "b.py"], 5000)
    assert ch.paths == ["a.py", "b.py"]
    text = ch.numbered_text()
    assert "### a.py (lines 1-4 of 4)" in text and "  4|     return X" in text
    assert "### b.py (lines 1-1 of 1)\n  1| Y = 2" in text
    assert ch.nbytes == len("X = 1\n\ndef f():\n    return X\nY = 2\n")
    assert ch.shows("a.py", 4, 4) and not ch.shows("b.py", 2, 3) and ch.shows("b.py", 2, 3, 1)
    from rlm.corpus.lines import MAX_LINE_CHARS

    (tmp_path / "c.py").write_text("x" * (MAX_LINE_CHARS + 100) + "\n")
    [cut] = chunk_files(tmp_path, "(root)", ["c.py"], 5000)
    assert cut.cut_lines() == 1 and cut.numbered_text().endswith(" […]")
    assert cut.cut_lines(MAX_LINE_CHARS + 100) == 0  # shown whole when the cap allows it


def test_audit_failed_part_is_read_again_or_reported(fake_server, tmp_path):
    from rlm.models.openai_compat import OpenAICompatModel

    root = tmp_path / "repo"
    write_repo(root)
    _serve_good(fake_server)

    def model():
        return OpenAICompatModel("fake", fake_server.url, max_attempts=1, backoff_base=0.01)

    fake_server.fault("### parcelpost/net/client.py", "500", times=1)
    rep = audit(str(root), _opts(fake_server), model=model())
    assert any(w.startswith("re-read 1 part") for w in rep.audit.rounds[1].work)
    assert rep.coverage.complete and not rep.coverage.chunks_failed and rep.files.failed == 0

    fake_server.clear_faults()
    fake_server.fault("### parcelpost/net/client.py", "500")  # fails every time
    rep = audit(str(root), _opts(fake_server), model=model())
    _check_report(root, rep)
    assert not rep.coverage.complete and "INCOMPLETE" in rep.coverage.statement
    assert "parcelpost/net/client.py" in rep.files.failed_files
    assert rep.coverage.chunks_failed


def test_a_model_that_picks_no_risk_cannot_suppress_code_flagged_risks(fake_server, tmp_path):
    """Issue 13: a risk rule's hit is a code signal. A model answering "nothing here" (no picks)
    to the risk lens leaves every hit a finding, in code's words, at its real line."""
    root = tmp_path / "repo"
    write_repo(root)
    fake_server.on("ModuleResult", R.good_module)
    fake_server.on("PickResult", R.good_pick)
    fake_server.on("RiskPickResult", lambda req, text: {"picks": []})
    rep = audit(str(root), _opts(fake_server))
    _check_report(root, rep)
    kept = [f for f in rep.findings if f.kind == "risk" and f.note and "kept by code" in f.note]
    assert kept, "risk-rule hits the model did not pick must stay findings"
    for f in kept:
        assert f.verified and f.status != "rejected"
        line = (root / f.source.path).read_text().splitlines()[f.source.line_start - 1]
        assert line.strip() in f.evidence


def test_audit_evidence_is_only_found_in_what_the_call_was_shown(fake_server, tmp_path):
    """The one evidence rule, as in ask (rlm.corpus.chunk.ShownLines): a quote cited a few
    lines past the end of a call's chunk is in the file, but the call never saw it: rejected,
    not verified (the rule used to allow 5 lines past what was shown)."""
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    lines = [f"SETTING_{i} = {i * 7}" for i in range(1, 241)]
    (root / "pkg" / "big.py").write_text("\n".join(lines) + "\n")
    seen: list[tuple[int, int]] = []

    def module(req, text):
        facts = []
        for path, rows in R.module_rows(text):
            if path != "pkg/big.py" or not rows:
                continue
            first, last = rows[0][0], rows[-1][0]
            seen.append((first, last))
            facts.append({"claim": "a setting it shows", "evidence_path": f"{path}:{last}",
                          "quote": lines[last - 1]})
            if last + 2 <= len(lines):  # in the file, 2 lines past what this call was shown
                facts.append({"claim": "a setting it never saw",
                              "evidence_path": f"{path}:{last + 2}", "quote": lines[last + 1]})
        return {"purpose": "settings", "key_apis": [], "facts": facts, "risks": []}

    fake_server.on("ModuleResult", module)
    rep = audit(str(root), _opts(fake_server, chunk_chars=1500, max_rounds=1))
    assert len(seen) >= 3  # the file was read in several calls
    by_line = {f.source.line_start: f for f in rep.findings if f.source.path == "pkg/big.py"}
    for first, last in seen:
        assert by_line[last].verified
    unseen = [f for f in rep.findings if f.claim == "a setting it never saw"]
    assert unseen and all(not f.verified and f.status == "rejected" for f in unseen)
    assert all("was not shown to this call" in (f.note or "") for f in unseen), \
        [f.note for f in unseen]
