"""A run's placeholders past MEMORY_VALUES move to temporary disk (rlm.redact.spill): the
Redactor's memory stays bounded on a log of millions of distinct addresses or tokens, and
nothing it gives changes: the same placeholder for the same value, numbered alike, mapped
back by restore (issue 21: bounded memory)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import anyio
import pytest
from evals.bench_recurring import access_log
from evals.bench_redact import _chunks, ip_dense_log
from tests.planted_secrets import KINDS, keyed_line, prose_line

from rlm.api import AskOptions, ask_async
from rlm.corpus.spool import spool_budget
from rlm.errors import UsageError
from rlm.models.openai_compat import reset_mode_cache
from rlm.redact import recurring
from rlm.redact import redactor as redactor_mod
from rlm.redact.redactor import Redactor
from tests.redact.test_redact_run import SECRETS, map_quoting_errors, planted_log

LOGHUB = sorted((Path(__file__).resolve().parents[2] / "evals" / "data" / "loghub").glob("*.log"))
PLACEHOLDER = re.compile(r"⟨[A-Z]+_\d+⟩")


def _prompts(text: str) -> list[str]:
    return _chunks(text, 4_000)  # as a fan-out cuts prompts


def _texts() -> list[str]:
    planted = "\n".join(keyed_line(k) + "\n" + prose_line(k) for k in sorted(KINDS))
    loghub = "".join(p.read_text("utf-8", "replace") for p in LOGHUB[:6])
    # addresses and tokens come back after many others: from disk then
    dense = ip_dense_log(1500) + access_log(600)
    return [*_prompts(dense), *_prompts(planted), *_prompts(loghub), *_prompts(dense)]


def test_a_small_memory_gives_what_a_large_one_gives(monkeypatch):
    texts = _texts()
    large = Redactor()
    want = [large.redact(t, count_prompt=True) for t in texts]
    monkeypatch.setattr(recurring, "MEMORY_SECRETS", 25)  # the known secrets move too
    small = Redactor(memory_values=40)
    held = []
    for t, b in zip(texts, want):
        a = small.redact(t, count_prompt=True)
        assert a == b, t[:200]
        assert small.restore(a) == large.restore(b) == t
        held.append(len(small._by_value))
    assert small._spill is not None and large._spill is None
    assert small._known._index.disk is not None and len(small._known._rank) <= 25 + 200
    assert len(small._known) == len(large._known) > 600
    assert max(held) <= 40 + max(len(PLACEHOLDER.findall(large.redact(t))) for t in texts)
    assert small.counts() == large.counts() and small.prompts == large.prompts
    assert sum(large.counts().values()) > 3_000  # most of them came back from disk
    for kind, value in [("IP", "203.0.113.77"), ("SECRET", "hunter2hunter2x")]:
        assert small.placeholder(kind, value) == large.placeholder(kind, value)


def test_the_file_is_removed_and_the_disk_given_back(tmp_path):
    before = spool_budget.held
    r = Redactor(memory_values=10)
    r.redact(ip_dense_log(100))
    path = r._spill.path
    assert os.path.exists(path) and oct(os.stat(path).st_mode & 0o777) == "0o600"
    assert spool_budget.held > before
    r._spill.close()
    assert not os.path.exists(path) and spool_budget.held == before


def test_the_spool_cap_bounds_the_disk_it_takes(monkeypatch):
    monkeypatch.setenv("RLM_SPOOL_LIMIT", "2K")
    r = Redactor(memory_values=10)
    with pytest.raises(UsageError, match="redaction's placeholders.*RLM_SPOOL_LIMIT"):
        r.redact(ip_dense_log(200))


def test_a_fanout_with_a_small_memory_sends_and_verifies_the_same(
        tmp_path, fake_server, monkeypatch):
    """Through the real fake server: the same prompts, placeholder for placeholder, and the
    same findings verified (their quotes are mapped back from disk to be checked)."""
    fake_server.on("MapResult", map_quoting_errors)
    p = tmp_path / "app.log"
    planted_log(p, lines=3000)

    def run():
        reset_mode_cache()
        before = len(fake_server.requests)
        opts = AskOptions(model="fake", base_url=fake_server.url, timeout=5.0, redact=True,
                          strategy="fanout", usable_fraction=0.05, no_cache=True,
                          concurrency=1)
        rep = anyio.run(lambda: ask_async(str(p), "which errors happened?", opts))
        return rep, [json.dumps(r["body"]["messages"], ensure_ascii=False)
                     for r in fake_server.requests[before:]]

    large, sent_large = run()
    monkeypatch.setattr(redactor_mod, "MEMORY_VALUES", 3)
    small, sent_small = run()
    assert sent_small == sent_large
    for value in SECRETS:
        assert not any(value in b for b in sent_small), value
    verified = [(f.source.line_start, f.evidence) for f in small.findings if f.verified]
    assert verified == [(f.source.line_start, f.evidence) for f in large.findings if f.verified]
    assert any("203.0.113.77" in e for _, e in verified)  # its quote was mapped back from disk
    assert small.redaction == large.redaction


def test_past_the_spool_cap_a_run_ends_with_one_line(tmp_path, fake_server, monkeypatch):
    """The CLI, in process: a run whose placeholders outgrow memory and the disk cap stops with
    a one-line error naming the cap and how to raise it (exit 2), no traceback."""
    from rlm.testing import run_cli
    from tests.cli.test_cli import one_line_error

    fake_server.on("MapResult", lambda req, text: {"findings": []})
    p = tmp_path / "sshd.log"
    p.write_text(ip_dense_log(2000))
    monkeypatch.setattr(redactor_mod, "MEMORY_VALUES", 50)
    r = run_cli("ask", str(p), "which errors happened?", "--model", "fake", "--base-url",
                fake_server.url, "--redact", "--strategy", "fanout", "--no-cache",
                env=dict(os.environ, RLM_SPOOL_LIMIT="8K", HOME=str(tmp_path)))
    line = one_line_error(r)
    assert "redaction's placeholders past the 50 kept in memory" in line
    assert "spool cap of 8 KiB" in line and "RLM_SPOOL_LIMIT" in line


def test_the_filter_never_hides_a_spilled_value_and_rarely_sends_a_new_one_to_disk():
    from rlm.redact.spill import Spill

    spill = Spill(memory_values=0)
    old = [("IP", f"10.{i // 65536}.{i // 256 % 256}.{i % 256}") for i in range(20_000)]
    spill.put((k, f"⟨IP_{n}⟩") for n, k in enumerate(old, 1))
    spill.put([(("SECRET", "tok-\udcff-surrogate"), "⟨SECRET_1⟩")])
    asked = []
    real = spill._db.execute

    def counted(sql, params=()):
        asked.extend(params)
        return real(sql, params)

    spill._db = type("Db", (), {"execute": staticmethod(counted)})()
    found = spill.shown_many(old[::7] + [("SECRET", "tok-\udcff-surrogate")])
    assert len(found) == len(old[::7]) + 1 and found[old[7]] == "⟨IP_8⟩"
    asked.clear()
    new = [("IP", f"172.16.{i // 256}.{i % 256}") for i in range(10_000)]
    assert spill.shown_many(new) == {}
    assert len(asked) < 300  # ~1% of them: the rest never reach the disk
    spill._db = type("Db", (), {"execute": staticmethod(real)})()
    assert spill.value_of("⟨IP_8⟩") == old[7][1]
    spill.close()


def test_the_disk_store_knows_every_kind_and_placeholder():
    """Its copy of detect's kinds and placeholder pattern (it cannot import detect)."""
    from rlm.redact import detect, spill

    assert spill._KINDS == detect.KINDS and len(detect.KINDS) <= 8
    assert spill._SHOWN.pattern == detect.PLACEHOLDER.pattern
