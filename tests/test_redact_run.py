"""Redaction end to end: the real fake HTTP server records every request body; nothing planted
may be in any of them when redaction is on, on every path (direct, grep, profile, fan-out,
synthesis), and the local report still quotes the file (unless --redact-report)."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path

import anyio
import pytest

from rlm.testing import FakeServer, prompt_text
from rlm.api import AskOptions, ask_async
from rlm.fixtures.log import write_log
from rlm.models.openai_compat import reset_mode_cache

SECRETS = {  # planted value -> the line it sits on (an error line, so code picks it)
    "jane.doe@acme-corp.com": "ERROR [billing] TXN-4444 charge failed for jane.doe@acme-corp.com "
                              "order ORD-99173",
    "4111 1111 1111 1111": "ERROR [billing] TXN-4444 card 4111 1111 1111 1111 declined sess-77f3a9",
    "DE89 3704 0044 0532 0130 00": "ERROR [payout] TXN-4444 iban DE89 3704 0044 0532 0130 00 "
                                   "rejected file=build-9f86d081884c7d65.tar.gz",
    "+44 20 7946 0958": "ERROR [support] TXN-4444 callback to +44 20 7946 0958 failed",
    "203.0.113.77": "ERROR [auth] TXN-4444 brute force from 203.0.113.77 sess-77f3a9",
    "2001:db8:85a3::8a2e:370:7334": "ERROR [auth] TXN-4444 blocked 2001:db8:85a3::8a2e:370:7334",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJqYW5lIn0.c2lnbmF0dXJlMTIz":
        "ERROR [gateway] TXN-4444 rejected header Authorization: Bearer "
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJqYW5lIn0.c2lnbmF0dXJlMTIz",
    "Tr0ub4dor3xyz": "ERROR [db] TXN-4444 cannot connect postgres://svc:Tr0ub4dor3xyz@db.internal/app",
    "AKIAIOSFODNN7EXAMPLE": "ERROR [s3] TXN-4444 access denied for key AKIAIOSFODNN7EXAMPLE",
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789": "ERROR [ci] TXN-4444 token "
                                                "ghp_abcdefghijklmnopqrstuvwxyz0123456789 revoked",
}
LOOKALIKES = ["TXN-4444", "ORD-99173", "sess-77f3a9", "build-9f86d081884c7d65.tar.gz"]
NUMBERED = re.compile(r"^(\d+)\| (.*)$", re.M)


def planted_log(path: Path, lines: int = 3000) -> dict[str, int]:
    """The log fixture with the planted lines spread over it; value -> its line number."""
    write_log(path, lines=lines)
    text = path.read_text().splitlines()
    where = {}
    for i, (value, line) in enumerate(SECRETS.items()):
        at = (i + 1) * (lines // (len(SECRETS) + 2))
        text[at] = f"2026-03-14T09:{i:02d}:00.000Z {line}"
        where[value] = at + 1
    path.write_text("\n".join(text) + "\n")
    return where


def map_quoting_errors(req, text):
    """A map reader that reports every ERROR line, quoting it as it saw it and repeating it in
    the claim (so what it saw comes back, and flows into the synthesis prompt)."""
    found = []
    for m in NUMBERED.finditer(text):
        if " ERROR " in m.group(2):
            q = m.group(2).split(" ERROR ", 1)[1][:150]
            found.append({"line": int(m.group(1)), "claim": f"error: {q[:140]}", "quote": q})
    return {"findings": found[:3]}


def answer_quoting(req, text):
    m = NUMBERED.search(text)
    return {"answer": "See " + (m.group(2)[:200] if m else "nothing"),
            "cites": [int(m.group(1))] if m else []}


def sent(server) -> list[str]:
    return [json.dumps(r["body"], ensure_ascii=False) for r in server.requests]


def ask(path, question, server, model_name="fake", **kw):
    reset_mode_cache()
    opts = AskOptions(model=model_name, base_url=server.url, timeout=5.0, **kw)
    return anyio.run(lambda: ask_async(str(path), question, opts))


def assert_nothing_planted_sent(server):
    bodies = sent(server)
    assert bodies, "no request was made"
    for b in bodies:
        for v in SECRETS:
            assert v not in b, v


@pytest.fixture
def server(fake_server):
    fake_server.on("MapResult", map_quoting_errors)
    fake_server.on("AnswerResult", answer_quoting)
    return fake_server


# ------------------------------------------------------------------ every path, redacted

@pytest.mark.parametrize("strategy,question", [("profile", "anomalies?"),
                                               ("grep", "what happened to TXN-4444?"),
                                               ("fanout", "which errors happened?")])
def test_nothing_planted_leaves_on_any_path(tmp_path, server, strategy, question):
    p = tmp_path / "app.log"
    where = planted_log(p)
    kw = {"usable_fraction": 0.05} if strategy == "fanout" else {}
    rep = ask(p, question, server, redact=True, strategy=strategy, **kw)
    assert rep.strategy == strategy
    assert_nothing_planted_sent(server)
    bodies = "\n".join(sent(server))
    for x in LOOKALIKES:  # ids that only look like secrets go out as they are
        assert x in bodies, x
    assert "⟨EMAIL_1⟩" in bodies and "⟨SECRET_" in bodies
    if strategy == "fanout":  # several map calls, then synthesis over the verified findings
        assert sum(r["schema_name"] == "MapResult" for r in server.requests) > 1
        assert "Verified findings" in prompt_text(server.requests[-1]["body"])
    # the local report quotes the file: every planted line is evidence, verified, as written
    by_line = {f.source.line_start: f for f in rep.findings if f.verified}
    for value, ln in where.items():
        assert ln in by_line, (value, ln)
        assert value in by_line[ln].evidence
    red = rep.redaction
    assert red.enabled and red.values >= len(SECRETS) and red.prompts >= 1
    assert red.kinds["SECRET"] >= 4 and red.kinds["EMAIL"] == 1 and red.kinds["CARD"] == 1
    assert f"{red.values} values in {red.prompts} prompt" in rep.coverage.statement


def test_direct_read_is_redacted_too(tmp_path, server):
    p = tmp_path / "small.log"
    planted_log(p, lines=400)
    rep = ask(p, "anything wrong?", server, redact=True, strategy="direct")
    assert rep.strategy == "direct"
    assert_nothing_planted_sent(server)
    # the model's answer repeated placeholders; the local answer shows the original text
    assert "⟨" not in rep.answer


def test_redact_report_masks_report_run_record_and_cache(tmp_path, server):
    p = tmp_path / "app.log"
    planted_log(p)
    rep = ask(p, "which errors happened?", server, redact_report=True, strategy="fanout",
              usable_fraction=0.05)
    assert_nothing_planted_sent(server)
    report = rep.model_dump_json()
    for v in SECRETS:
        assert v not in report, v
    assert rep.redaction.report_masked and rep.redaction.enabled
    assert any("⟨CARD_1⟩" in f.evidence for f in rep.findings if f.verified)
    stored = b"".join(f.read_bytes() for d in ("_rlm_cache", "_rlm_data")
                      for f in (tmp_path / d).rglob("*") if f.is_file())
    assert len(stored) > 10_000 and b"TXN-4444" in stored  # the record is there...
    for v in SECRETS:
        assert v.encode() not in stored, v  # ...without the planted values


def test_without_redact_report_the_cache_still_holds_only_redacted_traffic(tmp_path, server):
    p = tmp_path / "app.log"
    planted_log(p)
    rep = ask(p, "which errors happened?", server, redact=True, strategy="fanout",
              usable_fraction=0.05)
    assert any("4111 1111 1111 1111" in f.evidence for f in rep.findings)  # local report: exact
    cache = b"".join(f.read_bytes() for f in (tmp_path / "_rlm_cache").rglob("*") if f.is_file())
    assert b"CARD_1" in cache or b"\xe2\x9f\xa8" in cache  # replies as the model wrote them
    for v in SECRETS:
        assert v.encode() not in cache, v
    # a second run answers from that cache: same placeholders, same (restored) findings
    n = len(server.requests)
    rep2 = ask(p, "which errors happened?", server, redact=True, strategy="fanout",
               usable_fraction=0.05)
    assert rep2.usage.cached_calls > 0 and len(server.requests) - n < rep2.usage.cached_calls
    assert sorted(f.evidence for f in rep2.findings) == sorted(f.evidence for f in rep.findings)


# ------------------------------------------------------------------ the default

def test_loopback_endpoint_defaults_to_no_redaction(tmp_path, server, monkeypatch):
    monkeypatch.delenv("RLM_REDACT", raising=False)
    p = tmp_path / "app.log"
    planted_log(p)
    rep = ask(p, "anomalies?", server)
    assert not rep.redaction.enabled and "loopback" in rep.redaction.why
    assert "jane.doe@acme-corp.com" in "\n".join(sent(server))
    assert "redacted before leaving" not in rep.coverage.statement


def _non_loopback_address() -> str | None:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect(("192.0.2.1", 9))  # UDP connect: picks the route, sends nothing
        addr = s.getsockname()[0]
    except OSError:
        return None
    finally:
        s.close()
    return None if addr.startswith("127.") else addr


def test_non_loopback_endpoint_defaults_to_redaction(tmp_path, monkeypatch):
    monkeypatch.delenv("RLM_REDACT", raising=False)
    p = tmp_path / "app.log"
    planted_log(p)
    # a dry run resolves the host only: the report says what a real run would do
    reset_mode_cache()
    dry = anyio.run(lambda: ask_async(str(p), "anomalies?", AskOptions(
        model="fake", base_url="http://203.0.113.9:8000/v1", dry_run=True)))
    assert dry.redaction.enabled and "203.0.113.9" in dry.redaction.why
    addr = _non_loopback_address()
    if addr is None:
        pytest.skip("this machine has no non-loopback address to serve the fake model on")
    with FakeServer(host=addr) as server:
        server.on("MapResult", map_quoting_errors)
        rep = ask(p, "anomalies?", server)
        assert rep.redaction.enabled and addr in rep.redaction.why
        assert_nothing_planted_sent(server)


# ------------------------------------------------------------------ the command line

def _rlm(*args, env=None):
    import os

    from rlm.testing.cli import run_cli

    e = {k: v for k, v in os.environ.items() if not k.startswith("RLM_REDACT")}
    return run_cli(*args, env={**e, **(env or {})})


def test_cli_flags_and_their_errors(tmp_path, server):
    p = tmp_path / "app.log"
    planted_log(p)
    base = ["ask", str(p), "anomalies?", "--model", "fake", "--base-url", server.url, "--json"]
    r = _rlm(*base, "--redact")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["redaction"]["enabled"] and rep["redaction"]["why"] == "set by --redact"
    assert "redacted before leaving this machine" in rep["coverage"]["statement"]
    assert_nothing_planted_sent(server)
    server.requests.clear()
    r = _rlm(*base, env={"RLM_REDACT": "on"})
    assert json.loads(r.stdout)["redaction"]["why"] == "set by RLM_REDACT"
    assert_nothing_planted_sent(server)
    r = _rlm(*base, "--no-redact", env={"RLM_REDACT": "on"})
    assert json.loads(r.stdout)["redaction"]["enabled"] is False  # the flag wins
    for args, env, msg in ((["--redact-report", "--no-redact"], None, "--redact-report"),
                           ([], {"RLM_REDACT": "bogus"}, "RLM_REDACT")):
        r = _rlm(*base, *args, env=env)
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        lines = [x for x in r.stderr.strip().splitlines() if x.strip()]
        assert len(lines) == 1 and lines[0].startswith("rlm:") and msg in lines[0], r.stderr
