"""The entropy detector's candidates (rlm.redact.scan.candidates) skip the runs too short to
pass, and find exactly what reading every candidate finds: an access log has three short
candidates a line ('01/Mar/2026', 'AppleWebKit/537', 'Mobile/15E148'), each a Python call,
and that was two thirds of its redaction time (issue 21, item 4)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from rlm.redact import scan
from rlm.redact.dense import spans

LOGS = sorted((Path(__file__).resolve().parents[2] / "evals" / "data" / "loghub").glob("*.log"))
UA = ('"Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, '
      'like Gecko) Version/17.1 Mobile/15E148 Safari/604.1"')


def _every_candidate(data: bytes) -> list[tuple[int, int, str]]:
    """What entropy_hits found before: every candidate the token pattern finds, judged."""
    out = []
    for s, e in spans(scan._token_rx(), data):
        verdict = scan._verdict(data[s:e])
        if verdict is not None:
            out.append((s + verdict[0], e, verdict[1]))
    return out


def _key(rnd: random.Random, n: int, alphabet: str) -> str:
    return "".join(rnd.choice(alphabet) for _ in range(n))


def _pieces(rnd: random.Random) -> str:
    """Short candidates, long runs that are no candidate, candidates of every length around
    TOKEN_MIN (with and without '=' padding and a lead of '-_~/+'), symbol-rich runs, glued
    by the characters that end or join runs."""
    base = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    rich = base + "!@#$%^*()"
    parts = []
    for _ in range(300):
        r = rnd.random()
        if r < 0.3:
            parts.append(rnd.choice(["01/Mar/2026", "Win64", "AppleWebKit/537", "Mobile/15E148",
                                     "aB1", "xY9z", "/usr/lib/x86_64-linux-gnu/libc",
                                     "blk_-1608999687919862906", "Ab1" * 6, "Ab1" * 7]))
        elif r < 0.55:
            n = rnd.randrange(scan.TOKEN_MIN - 3, scan.TOKEN_MIN + 4)
            parts.append(rnd.choice(["", "-", "_~", "/+"]) + _key(rnd, n, base)
                         + rnd.choice(["", "=", "=="]))
        elif r < 0.7:
            parts.append(_key(rnd, rnd.randrange(30, 50), rich))
        elif r < 0.8:
            parts.append(_key(rnd, rnd.randrange(20, 40), "abcdefghij/-_"))  # a long run
        else:
            parts.append(rnd.choice([" ", "\n", "=", ".", ",", "!", "~", "/", "&", "\x00", "é"]))
    return "".join(parts)


def test_an_access_log_s_short_candidates_are_skipped_and_its_keys_found():
    rnd = random.Random(1)
    keys = [_key(rnd, 32, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
            for _ in range(3)]
    lines = [f'10.0.0.{i} - - [01/Mar/2026:12:00:{i:02d} +0000] "GET /a?k='
             f'{keys[i % 3] if i % 7 == 0 else i} HTTP/1.1" 200 512 "-" {UA}' for i in range(60)]
    data = "\n".join(lines).encode()
    found = list(scan.entropy_hits(data))
    assert found == _every_candidate(data)
    assert {v for _, _, v in found} == set(keys)
    assert len(list(scan.candidates(data))) == len(found)  # no short one reached Python


@pytest.mark.parametrize("seed", range(40))
def test_random_text_gives_what_every_candidate_gives(seed):
    data = _pieces(random.Random(seed)).encode()
    assert list(scan.entropy_hits(data)) == _every_candidate(data)


@pytest.mark.parametrize("path", LOGS, ids=[p.name for p in LOGS])
def test_real_logs_give_what_every_candidate_gives(path):
    data = path.read_bytes()
    assert list(scan.entropy_hits(data)) == _every_candidate(data)
