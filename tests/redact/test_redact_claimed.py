"""A secret found already is not judged again (rlm.redact.detect._byte_hits' `claimed`): on a
log with a token on every line, the key=value pattern, gitleaks' generic rule and the entropy
test each found the same value, three Python judgments a line (issue 21, item 4). Skipping the
later two must change nothing that detect gives: these tests run detect both ways."""

from __future__ import annotations

import random
import string
from pathlib import Path

from evals.bench_recurring import access_log, jwt_log
from tests.planted_secrets import KINDS, keyed_line, prose_line

from rlm.redact import detect as D
from rlm.redact import scan
from rlm.redact.redactor import Redactor
from rlm.redact.rules import RuleSet

LOGHUB = sorted((Path(__file__).resolve().parents[2] / "evals" / "data" / "loghub").glob("*.log"))


def _jwt_signature_recurs() -> str:
    """A JWT in a bearer header (one hit, the whole token), and its signature again inside a
    path that no detector takes whole (a word leads it): only the entropy test's own judgment
    of the signature, inside the token's span, makes it a value to take where it recurs."""
    rnd = random.Random(5)
    sig = "".join(rnd.choice(string.ascii_letters + string.digits) for _ in range(43))
    jwt = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0." + sig
    return f"GET /x Authorization: Bearer {jwt}\ncache hit at apps/{sig}/index\n"


def _texts() -> list[str]:
    texts = [access_log(200), jwt_log(200), _jwt_signature_recurs()]
    texts += [keyed_line(k) + "\n" + prose_line(k) for k in sorted(KINDS)]
    texts += [p.read_text("utf-8", "replace") for p in LOGHUB]
    return texts


def test_skipping_what_was_claimed_changes_no_hit(monkeypatch):
    texts = _texts()
    now = [D.detect(t) for t in texts]
    find, hits = RuleSet.find, scan.entropy_hits
    with monkeypatch.context() as m:
        m.setattr(RuleSet, "find", lambda self, where, claimed=(): find(self, where))
        m.setattr(D, "entropy_hits", lambda data, claimed=(): hits(data))
        before = [D.detect(t) for t in texts]
    for t, a, b in zip(texts, now, before):
        assert a == b, t[:200]
    assert any(h.kind == "SECRET" for hs in now for h in hs)


def test_the_recurring_signature_is_taken_inside_the_path():
    text = _jwt_signature_recurs()
    sig = text.rsplit(".", 1)[1].split("\n")[0]
    out = Redactor().redact(text)
    assert sig not in out, out
    assert "apps/⟨SECRET_" in out


def test_a_token_on_every_line_is_judged_once(monkeypatch):
    """The access log's tokens: the key=value pattern finds each, and neither the generic rule
    nor the entropy test judges it again."""
    judged = {"rule": 0, "entropy": 0}
    allowed, verdict = RuleSet._allowed, scan._verdict

    def counted_allowed(self, *a):  # the last of a rule's judgments, reached by a token
        judged["rule"] += 1
        return allowed(self, *a)

    def counted_verdict(raw):
        judged["entropy"] += 1
        return verdict(raw)

    monkeypatch.setattr(RuleSet, "_allowed", counted_allowed)
    monkeypatch.setattr(scan, "_token_verdict", counted_verdict)
    text = access_log(100)
    hits = D.detect(text)
    assert sum(h.kind == "SECRET" for h in hits) == 100
    assert judged == {"rule": 0, "entropy": 0}
    monkeypatch.setattr(D, "entropy_hits", lambda data, claimed=(): scan.entropy_hits(data))
    find = RuleSet.find
    monkeypatch.setattr(RuleSet, "find", lambda self, where, claimed=(): find(self, where))
    assert D.detect(text) == hits
    tokens = len(list(scan.candidates(text.encode())))  # those with upper, lower and a digit
    assert tokens >= 90
    assert judged == {"rule": 100, "entropy": tokens}  # as before: each judged three times
