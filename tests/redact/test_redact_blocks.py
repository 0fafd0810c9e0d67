"""Which 4 KB blocks hold which words (rlm.redact.blocks): gitleaks' rules and the rare
detectors read only the blocks and lines that hold their words, and a Set whose DFA gave up
(it then answers like a Set that found nothing) makes its block count as holding every word."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlm.redact import detect as D
from rlm.redact.blocks import WordSet, cut_blocks

FILLER = [f"2026-03-01 12:00:{i % 60:02d} INFO request ok id={i} path=/v1/items" for i in range(3000)]
SECRET = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"  # a GitHub classic token's shape


def _text(at: int, line: str) -> str:
    rows = list(FILLER)
    rows[at] = line
    return "\n".join(rows) + "\n"


def test_blocks_end_at_line_ends_and_cover_the_text():
    data = _text(10, "x").encode()
    blocks = cut_blocks(data)
    assert blocks[0][0] == 0 and blocks[-1][1] == len(data) and len(blocks) > 10
    assert all(data[b - 1:b] == b"\n" for _, b in blocks)
    assert all(a == b for (_, a), (b, _) in zip(blocks, blocks[1:]))


def test_a_word_is_found_in_its_block_only():
    line = b"2026-03-01 12:00:00 WARN login password=Tr0ub4dor3xyz for ops"
    data = _text(1500, line.decode()).encode()
    where = WordSet([b"password", b"absent"]).where(data)
    [(a, b)] = where.windows([b"password"])  # its block and one either side
    assert line in data[a:b] and b - a < 3 * 4096 + 400
    [(a0, b0)] = where.windows([b"password"], margin=0)
    assert line in data[a0:b0] and b0 - a0 < 4096 + 200
    assert where.windows([b"absent"]) == []


def test_secrets_far_apart_are_each_found():
    text = _text(100, f"token refresh GITHUB_TOKEN={SECRET}")
    text = text.replace("id=2900 ", "id=2900 password=Tr0ub4dor3xyz ")
    values = {h.value for h in D.detect(text)}
    assert {SECRET, "Tr0ub4dor3xyz"} <= values


class _GaveUp:
    """RE2's Set after its DFA ran out of memory: an empty answer, canary included."""

    def Match(self, data):  # noqa: N802 - RE2's name
        return []


def test_a_set_that_gave_up_reads_every_block_by_every_rule(monkeypatch):
    words = WordSet(D._words().words, engine="re2")
    text = _text(2000, f"export GITHUB_TOKEN={SECRET} password=Tr0ub4dor3xyz")
    monkeypatch.setattr(words, "_set", _GaveUp())
    monkeypatch.setattr(D, "_words", lambda: words)
    values = {h.value for h in D.detect(text)}
    assert {SECRET, "Tr0ub4dor3xyz"} <= values


LOGS = sorted((Path(__file__).resolve().parents[2] / "evals" / "data" / "loghub").glob("*.log"))


@pytest.mark.parametrize("path", LOGS, ids=[p.name for p in LOGS])
def test_hyperscan_and_the_re2_set_find_the_same_blocks(path):
    """The two engines agree block by block on real logs, with the case of a word changed
    (PASSWORD, Api) and words at block edges."""
    pytest.importorskip("hyperscan")
    text = path.read_text("utf-8", "replace")
    text += "\nPASSWORD=x Api_Key: y BeArEr z @host " + "\n".join(f"s.{i} ey" for i in range(900))
    data = text.encode()
    words = D._words().words
    fast, slow = WordSet(words, engine="hyperscan"), WordSet(words, engine="re2")
    a, b = fast.where(data), slow.where(data)
    assert fast.engine == "hyperscan" and slow.engine == "re2"
    assert a.blocks == b.blocks and a._found == b._found and len(a._found) > 3
