"""With redaction on (--redact, RLM_REDACT, the config file), the secrets a user typed in the
question or argv never reach the run record: the tests read the sqlite store (every column of
every run and event, and the raw files) and fail if a planted value is there. API keys are kept
out of the record whatever the setting."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys

import pytest
from rlm.testing.cli import run_cli  # in-process: a process per call costs seconds

AWS = "AKIAIOSFODNN7EXAMPLE"
BEARER = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJqYW5lIn0.c2lnbmF0dXJlMTIz"
PASSWORD = "Tr0ub4dor3xyz"
EMAIL = "jane.doe@acme-corp.com"
PLANTED = (AWS, BEARER, PASSWORD, EMAIL)
QUESTION = (f"who used {AWS} with Authorization: Bearer {BEARER} and password={PASSWORD}, "
            f"and did {EMAIL} see it?")


def rlm(*args, env=None):
    e = {k: v for k, v in os.environ.items()
         if not k.startswith("RLM_REDACT") and k not in ("RLM_MODEL", "RLM_BASE_URL")}
    return run_cli(*args, env={**e, **(env or {})})


def corpus(tmp_path):
    p = tmp_path / "access.log"
    p.write_text("".join(f"2026-03-14T09:00:{i % 60:02d}Z INFO [web] request {i} ok\n"
                         for i in range(200))
                 + f"2026-03-14T09:10:00Z WARN [s3] key {AWS} used from a new host\n")
    return p


def stored(tmp_path) -> str:
    """Everything the run records hold, read back through sqlite, plus the raw files."""
    db = tmp_path / "_rlm_data" / "runs.sqlite3"
    con = sqlite3.connect(db)
    try:
        rows = [repr(r) for t in ("runs", "events") for r in con.execute(f"SELECT * FROM {t}")]
    finally:
        con.close()
    raw = b"".join(f.read_bytes() for f in (tmp_path / "_rlm_data").rglob("*") if f.is_file())
    assert rows, "nothing was recorded"
    return "\n".join(rows) + raw.decode("utf-8", "replace")


def assert_nothing_planted(text: str, planted=PLANTED):
    for v in planted:
        assert v not in text, v


@pytest.mark.parametrize("how", ["flag", "env", "config"])
def test_question_and_argv_secrets_are_masked_in_the_run_record(tmp_path, how):
    p = corpus(tmp_path)
    args, env = ["ask", str(p), QUESTION, "--json"], None
    if how == "flag":
        args.append("--redact")
    elif how == "env":
        env = {"RLM_REDACT": "on"}
    else:
        assert rlm("config", "set", "redact", "on").returncode == 0
    r = rlm(*args, env=env)
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["redaction"]["enabled"] and AWS in rep["question"]  # the local report: as asked
    text = stored(tmp_path)
    assert_nothing_planted(text)
    assert "⟨SECRET_1⟩" in text and "⟨EMAIL_1⟩" in text and "access.log" in text
    for cmd in (["runs"], ["show", "last"], ["show", "last", "--json"]):
        out = rlm(*cmd)
        assert out.returncode == 0, out.stderr
        assert_nothing_planted(out.stdout + out.stderr)
    assert "who used ⟨SECRET_1⟩" in rlm("show", "last").stdout


def test_with_a_model_the_events_and_report_in_the_record_are_masked(tmp_path, fake_server):
    p = corpus(tmp_path)
    fake_server.on("AnswerResult", lambda req, text: {"answer": "Someone used the key.",
                                                      "cites": []})
    r = rlm("ask", str(p), QUESTION, "--model", "m", "--base-url", fake_server.url, "--redact",
            "--strategy", "grep", "--json")
    assert r.returncode == 0, r.stderr
    assert fake_server.requests
    for req in fake_server.requests:  # the prompts were redacted already (rlm.redact.model)
        assert_nothing_planted(json.dumps(req["body"], ensure_ascii=False))
    text = stored(tmp_path)
    assert_nothing_planted(text)
    assert '"kind": "gate"' in text or "gate" in text


def test_without_redaction_the_question_is_kept_but_api_keys_never(tmp_path, fake_server):
    key = "sk-test-0123456789abcdefXYZ"
    p = corpus(tmp_path)
    fake_server.on("AnswerResult", lambda req, text: {"answer": "ok", "cites": []})
    r = rlm("ask", str(p), f"was {key} or {AWS} used?", "--model", "m", "--base-url",
            fake_server.url, "--no-redact", "--json", env={"RLM_API_KEY": key})
    assert r.returncode == 0, r.stderr
    assert fake_server.requests[-1]["headers"].get("authorization") == f"Bearer {key}"
    text = stored(tmp_path)
    assert AWS in text  # redaction off: the question as typed (the user's choice)...
    assert key not in text  # ...but the API key is never stored
    out = rlm("show", "last") .stdout + rlm("runs").stdout
    assert key not in out


def test_a_masked_question_is_resumed_by_asking_it_again(tmp_path):
    p = corpus(tmp_path)
    assert rlm("ask", str(p), QUESTION, "--redact").returncode == 0
    r = rlm("resume", "last")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "recorded masked" in lines[0] and "--resume" in lines[0]
    r = rlm("ask", str(p), QUESTION, "--redact", "--resume", "last", "--json")
    assert r.returncode == 0, r.stderr  # the same question, masked the same way: accepted
    r = rlm("ask", str(p), QUESTION.replace("who used", "who else used"), "--redact", "--resume", "last")
    assert r.returncode == 2 and "re-runs the same question" in r.stderr
    assert_nothing_planted(stored(tmp_path))


def test_a_secret_seen_once_in_context_is_masked_where_it_recurs():
    """`password=X` in the question, then X alone in the prompt's list of search terms: the
    redactor masks the second too (it leaked before), and a later prompt with X alone as well."""
    from rlm.redact.redactor import Redactor

    r = Redactor()
    text = (f"Question: was password={PASSWORD} used with Bearer {BEARER}?\n"
            f"Search: 1 line matches '{PASSWORD}', '{BEARER}'")
    out = r.redact(text)
    assert PASSWORD not in out and BEARER not in out and "c2lnbmF0dXJlMTIz" not in out, out
    assert out.count("⟨SECRET_1⟩") == 2 and out.count("⟨SECRET_2⟩") == 2, out
    assert r.redact(f"line 7: {PASSWORD} again") == "line 7: ⟨SECRET_1⟩ again"
    assert r.restore(out) == text


def test_an_api_key_echoed_by_the_server_never_reaches_record_or_output(tmp_path, fake_server):
    from rlm.testing import Reply

    key = "sk-live-9f8e7d6c5b4a39281706"
    p = corpus(tmp_path)

    def echo_key(req, text):  # a proxy that quotes the request's credentials in its error
        return Reply(status=401, body={"error": {"message": f"bad credentials: Bearer {key}"}})

    fake_server.default = echo_key  # every call
    r = rlm("ask", str(p), "what happened?", "--model", "m", "--base-url", fake_server.url,
            "--strategy", "direct", "--no-redact", env={"RLM_API_KEY": key})
    assert fake_server.requests and r.returncode != 0
    assert key in json.dumps(fake_server.requests[-1]["headers"])  # it was sent, as it must be
    assert key not in r.stdout + r.stderr
    assert "bad credentials: Bearer ***" in r.stdout + r.stderr  # the echo, scrubbed
    assert key not in stored(tmp_path)
    assert key not in rlm("runs").stdout + rlm("show", "last").stdout + rlm("show", "last").stderr
