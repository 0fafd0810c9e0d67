"""Prompts scanned in batches (rlm.redact.batch) get exactly the hits each gets scanned alone:
on real logs cut as a fan-out cuts them, on the planted secrets, on prose and non-ASCII text,
and where one text's end and the next one's start would make a match together (issue 21,
item 4: a fan-out's redaction at the whole-text rate)."""

from __future__ import annotations

import importlib.util
import random
import tempfile
from pathlib import Path

import pytest

from evals.bench_redact import _chunks as _pieces  # cut at line ends, as a fan-out cuts
from rlm.fixtures.transcript import write_transcript
from rlm.redact import batch, detect as D
from rlm.redact.batch import SEP, pattern_hits_many
from rlm.redact.blocks import BLOCK, WordSet
from rlm.redact.detect import pattern_hits
from rlm.redact.rules import rule_set
from tests.planted_secrets import KINDS, keyed_line, prose_line

LOGS = sorted((Path(__file__).resolve().parents[2] / "evals" / "data" / "loghub").glob("*.log"))
ENGINES = ["re2"] + (["hyperscan"] if importlib.util.find_spec("hyperscan") else [])


def _same(texts: list[str]) -> None:
    got, alone = pattern_hits_many(texts), [pattern_hits(t) for t in texts]
    for i, (g, a) in enumerate(zip(got, alone)):
        assert g == a, (i, texts[i][:200], sorted(set(a) - set(g))[:4], sorted(set(g) - set(a))[:4])


@pytest.fixture(params=ENGINES)
def engine(request, monkeypatch):
    """The keywords' pass on either engine (Hyperscan where installed, the RE2 Set elsewhere)."""
    words = WordSet(D._words().words, engine=request.param, patterns=rule_set().presences())
    monkeypatch.setattr(D, "_words", lambda: words)
    return request.param


@pytest.mark.parametrize("size", [4_000, 16_000])
def test_loghub_cut_into_prompts(engine, size):
    texts = [piece for p in LOGS for piece in _pieces(p.read_text("utf-8", "replace"), size)]
    assert len(texts) > 100
    _same(texts)
    assert sum(map(len, pattern_hits_many(texts))) > 5_000  # addresses, e-mails: real hits


def test_planted_secrets_prose_and_non_ascii(engine):
    lines = [keyed_line(k, i) for i, k in enumerate(KINDS)] + \
            [prose_line(k, i) for i, k in enumerate(KINDS)]
    with tempfile.TemporaryDirectory() as d:
        write_transcript(Path(d) / "t.txt", lines=800)
        transcript = (Path(d) / "t.txt").read_text("utf-8")
    texts = lines + ["\n".join(lines[i:i + 7]) for i in range(0, len(lines), 7)] \
        + _pieces(transcript, 3_000) \
        + ["Grüße an jürgen.müller@example.de — 10.0.0.7 ✓ " + v for v, _ in KINDS.values()]
    _same(texts)
    assert sum(h.kind == "SECRET" for hs in pattern_hits_many(lines) for h in hs) >= len(KINDS)


JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ."
       "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c")
# a text's last words, and the next one's first, that read as one match when run together
TAILS = ["password=", "password", "api_key: ", "Authorization: Bearer", "token", "x-auth-token",
         "curl https://example.com/v1 \\", "kind: Secret\ndata:", "aws_secret_access_key =",
         "contact bob@", "call +44 20", "from 10.1.", "card 4111 1111", "ssn 512-48",
         "session " + JWT, "https://aaaaaaaa:bbbbbbbb@gems.contribsys.com", "version",
         "IBAN GB82 WEST", "fe80:", "sk-proj-", "https://user:", "-----BEGIN RSA"]
HEADS = ["hunter2secret42 ok", "= 'Tr0ub4dor3xyzQ9'", "abcdefgh12345678 next", "@example.com",
         ".2.3 port 22", "1111 1111 done", "-3921 ok", "7946 0958 ok", " -H 'Authorization: "
         "Basic c3ZjOnMzY3JldHBhc3N3b3JkMTI='", "  password: c2VjcmV0cGFzc3dvcmQxMg==",
         "1234 5698 7654 3210 00", ":8a2e:370:7334 up", "PRIVATE KEY-----\nMIIEowIBAAKCAQEA7",
         "hunter2@db.internal:5432/x", JWT, "zz9Q8x7LmN2pQ4rS6tUvWxYz0AbCdEfGh tail", ""]


def test_where_one_text_ends_and_the_next_begins(engine):
    """Every tail before every head, as neighbours in one batch (and each also inside a log
    line), against each text scanned alone."""
    texts = []
    for t in TAILS:
        for h in HEADS:
            texts += [t, h, f"2026-03-01 ERROR {t}", f"{h} trailing words\n"]
    _same(texts)


def test_a_keyword_window_is_the_text_s_own():
    """sourcegraph's rule matches any 40-hex string in the blocks around its keyword "sgp_":
    what it finds depends on where the text's blocks are cut. Here the keyword ends the text's
    first block and a hash lies past the next one: alone, nothing is found. After texts of
    other lengths, blocks cut across the texts would bring the hash into the window."""
    sha = "3f786850e387550fdab836ed7e6dc881de23001b"
    filler = "2026-03-01 INFO request ok path=/v1/items id=42 took 12ms\n"
    n = (BLOCK - 200) // len(filler)
    second = filler * n + "sgp_ mentioned here\n" + filler * (n + 10) + f"commit {sha}\n"
    assert not any(h.value == sha for h in pattern_hits(second))
    for size in range(0, BLOCK, 256):
        _same(["x" * size + "\n", second])


def test_text_edges_mean_what_they_mean_alone():
    """A rule that ends with `$` (the end of the text) finds a URL that ends a text alone: it
    must find it in a batch too, though a newline comes after it there."""
    url = "https://aaaaaaaa:bbbbbbbb@gems.contribsys.com"
    assert any(h.value == "aaaaaaaa:bbbbbbbb" for h in pattern_hits(url))
    _same(["first text\n", url, "third text"])


def test_a_hit_running_into_the_separator_sends_its_neighbours_alone(monkeypatch):
    """No detector here runs past SEP's newline, NUL and newline today; if one did (a future
    pattern), its hit would reach into SEP: the texts on both sides are then scanned alone."""
    alone_calls = []
    real_alone, real_joined = batch.pattern_hits, batch._byte_hits
    monkeypatch.setattr(batch, "pattern_hits", lambda t: alone_calls.append(t) or real_alone(t))

    def crossing(data, segments):  # one hit from the second text's last byte into SEP
        return real_joined(data, segments) + [(segments[1][1] - 1, segments[1][1] + 2, "SECRET")]

    monkeypatch.setattr(batch, "_byte_hits", crossing)
    texts = ["a 10.0.0.1", "x password=", "secretvalue1 here", "b 10.0.0.2"]
    _same(texts)
    assert alone_calls == texts[1:3]


def test_texts_with_a_nul_or_a_private_key_are_scanned_alone(monkeypatch):
    alone_calls = []
    real = batch.pattern_hits
    monkeypatch.setattr(batch, "pattern_hits", lambda t: alone_calls.append(t) or real(t))
    key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7x9Lq2mN8pQ4rS6tUvWxYz0AbCdEfGh\n" \
          "-----END RSA PRIVATE KEY-----"
    texts = ["one 10.0.0.1", f"with{SEP}sep 10.0.0.2", key, "two bob@example.com"]
    _same(texts)
    assert alone_calls == [texts[1], texts[2]]


def test_random_texts_in_random_batches(engine):
    """Random lines built from the pieces above, the planted values and log words, in random
    batches: each text's hits as alone."""
    rnd = random.Random(11)
    parts = TAILS + HEADS + [v for v, _ in KINDS.values()] + \
        ["INFO", "\n", "\n\n", " ", "=", ":", "\t", "10.0.0.1", "ERROR", "key", "\u00e9", "\"", "'"]
    texts = ["".join(rnd.choice(parts) + rnd.choice(["", " ", "\n"]) for _ in range(rnd.randrange(1, 40)))
             for _ in range(400)]
    for i in range(0, len(texts), 37):
        _same(texts[i:i + rnd.randrange(2, 60)])
