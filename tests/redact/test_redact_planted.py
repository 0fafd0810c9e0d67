"""Redaction of 33 shaped kinds (tests/planted_secrets.py) in keyed log lines and in prose, on
every path through the recording fake server; ids in real LogHub logs survive."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from tests.planted_secrets import KINDS, keyed_line, leaked, prose_line

from rlm.api import AskOptions, ask_async
from rlm.fixtures.log import write_log
from rlm.models.openai_compat import reset_mode_cache
from rlm.redact.detect import detect
from rlm.redact.redactor import Redactor

# `key-` + 32 hex digits (Mailgun's old key shape) reads like `key-<md5>` without the word
# "mailgun" near: redacting it would redact every hash. Keyed, it is caught.
KNOWN_PROSE_MISSES = {"mailgun"}
LOGHUB = Path(__file__).resolve().parents[2] / "evals" / "data" / "loghub"


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_each_kind_is_redacted_keyed_and_in_prose(kind):
    keyed = Redactor().redact(keyed_line(kind))
    assert not leaked(kind, keyed), keyed
    prose = Redactor().redact(prose_line(kind))
    assert leaked(kind, prose) == (kind in KNOWN_PROSE_MISSES), prose


def test_ids_in_real_logs_survive():
    """No secret is found in the 16 LogHub families' samples: their block ids, hex ids, UUIDs,
    paths and component names all go out as they are (IP and e-mail addresses are personal
    data: Linux_2k's one real address is redacted as an e-mail, not as a secret)."""
    found, mails = {}, set()
    for p in sorted(LOGHUB.glob("*.log")):
        hits = detect(p.read_text("utf-8", "replace"))
        secrets = [h.value for h in hits if h.kind not in ("IP", "EMAIL")]
        mails |= {h.value for h in hits if h.kind == "EMAIL"}
        if secrets:
            found[p.name] = secrets[:5]
    assert len(list(LOGHUB.glob("*.log"))) >= 16
    assert found == {}
    assert mails == {"bhcompile@bugs.build.redhat.com"}


def _planted_log(path: Path, lines: int = 2000) -> None:
    """The log fixture with every kind planted as an ERROR line, keyed and in prose."""
    write_log(path, lines=lines)
    text = path.read_text().splitlines()
    planted = [keyed_line(k, i % 60) for i, k in enumerate(KINDS)] + \
              [f"2026-03-14T09:00:{i % 60:02d}.000Z ERROR [chat] {prose_line(k, i)}"
               for i, k in enumerate(KINDS)]
    step = lines // (len(planted) + 1)
    for i, line in enumerate(planted):
        text[(i + 1) * step] = line.replace(" INFO ", " ERROR ").replace(" DEBUG ", " ERROR ")
    path.write_text("\n".join(text) + "\n")


def _map_all_errors(req, text):
    import re

    found = [{"line": int(m.group(1)), "claim": "error: " + m.group(2)[:140],
              "quote": m.group(2)[:150]}
             for m in re.finditer(r"^(\d+)\| (.*ERROR.*)$", text, re.M)]
    return {"findings": found[:3]}


def _bodies(server) -> str:
    return "\n".join(json.dumps(r["body"], ensure_ascii=False) for r in server.requests)


def _assert_nothing_leaked(server, allow=frozenset()):
    bodies = _bodies(server)
    assert server.requests
    leaks = [k for k in KINDS if k not in allow and leaked(k, bodies)]
    assert leaks == []


@pytest.mark.parametrize("strategy,question,extra", [
    ("profile", "anomalies?", {}), ("fanout", "which errors happened?", {"usable_fraction": 0.05}),
    ("direct", "anything wrong?", {})])
def test_no_planted_kind_reaches_the_server(tmp_path, fake_server, strategy, question, extra):
    fake_server.on("MapResult", _map_all_errors)
    p = tmp_path / "app.log"
    _planted_log(p, lines=2000 if strategy != "direct" else 300)
    reset_mode_cache()
    opts = AskOptions(model="fake", base_url=fake_server.url, timeout=5.0, redact=True,
                      strategy=strategy, **extra)
    rep = anyio.run(lambda: ask_async(str(p), question, opts))
    assert rep.strategy == strategy
    _assert_nothing_leaked(fake_server, KNOWN_PROSE_MISSES)
    assert rep.redaction.values >= len(KINDS)


def test_no_planted_kind_reaches_the_server_from_mine_and_audit(tmp_path, fake_server):
    from tests import repo_responders as R

    from rlm.repo.audit import AuditOptions, audit
    from rlm.fixtures.repo import write_repo
    from rlm.repo.mine import MineOptions, mine

    root = tmp_path / "repo"
    write_repo(root)
    lines = [f"{k.upper().replace('-', '_')}_SETTING = {json.dumps(keyed_line(k))}"
             for k in KINDS]
    (root / "parcelpost" / "settings_local.py").write_text('"""Local settings."""\n\n'
                                                           + "\n".join(lines) + "\n")
    fake_server.on("PickResult", lambda req, text: {"picks": []})
    fake_server.on("ModuleResult", R.good_module)
    fake_server.on("RiskPickResult", R.good_risk_pick)
    mine(str(root), ["Which settings does parcelpost/settings_local.py define?"],
         MineOptions(model="fake", base_url=fake_server.url, redact=True))
    audit(str(root), AuditOptions(model="fake", base_url=fake_server.url, redact=True,
                                  lenses=("structure",)))
    bodies = _bodies(fake_server)
    assert "settings_local" in bodies and "⟨SECRET_" in bodies  # the file was sent, redacted
    _assert_nothing_leaked(fake_server)
