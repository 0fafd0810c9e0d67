"""gitleaks' rules whose keywords are common words (generic-api-key, jwt, vault's "s.") read only
the blocks that hold what every match of theirs holds, found in the keywords' one pass
(rlm.redact.rules.presence, rlm.redact.blocks): they find what they found reading every block
that holds a keyword, on real logs, prose, the planted secrets and assignment lines, also where
a match sits at a block's edge (issue 21, item 4)."""

from __future__ import annotations

import importlib.util
import tempfile
from pathlib import Path

import pytest

from rlm.fixtures.transcript import write_transcript
from rlm.redact import detect as D
from rlm.redact.blocks import BLOCK, WordSet, cut_blocks
from rlm.redact.rules import COMMON, presence, rule_set
from tests.planted_secrets import KINDS, keyed_line, prose_line
from tests.redact.test_redact_rules_led import _assignments

LOGS = sorted((Path(__file__).resolve().parents[2] / "evals" / "data" / "loghub").glob("*.log"))
JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ."
       "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c")
VAULT = "s.Xq8Lw2Zr9Kt4Vb7Nm1Pc3Hd6"


def _found(data: bytes, words: WordSet) -> set:
    return {(f.start, f.end, f.value, f.rule) for f in rule_set().find(words.where(data))}


def _at_block_edges() -> bytes:
    """Secrets of the common rules written so that their matches cross line ends at block
    edges: the keyword and operator on two lines, the value on the next block's first line."""
    filler = b"2026-03-01 12:00:00 INFO request ok path=/v1/items id=42\n" * 60
    out = b""
    for tail in (b"password\n= 'Tr0ub4dor3xyzQ9'\n", b"api_key:\n\"k9Fz2LqP0xVb7Ws3\"\n",
                 b"auth " + JWT.encode() + b"\n", b"vault " + VAULT.encode() + b";\n",
                 b"lob_key\n=  LOBk9Fz2LqP0xVb7Ws3aa\n"):
        out += filler
        first_end = len(out) + tail.index(b"\n") + 1
        for _ in range(BLOCK):  # short lines until the tail's first line ends a block
            if any(b == first_end for _, b in cut_blocks(out + tail)):
                break
            out += b"x\n"
            first_end += 2
        else:
            raise AssertionError("no block edge reached")
        out += tail
    return out


def _texts() -> list[tuple[str, bytes]]:
    planted = "\n".join([keyed_line(k) for k in KINDS] + [prose_line(k) for k in KINDS])
    with tempfile.TemporaryDirectory() as d:
        write_transcript(Path(d) / "t.txt", lines=3_000)
        transcript = (Path(d) / "t.txt").read_bytes()
    return ([(p.name, p.read_bytes()) for p in LOGS] + [("planted", planted.encode()),
            ("transcript", transcript), ("edges", _at_block_edges())]
            + [(f"assignments-{s}", _assignments(s)) for s in (1, 2)])


ENGINES = ["re2"] + (["hyperscan"] if importlib.util.find_spec("hyperscan") else [])


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name,data", _texts(), ids=[n for n, _ in _texts()])
def test_presence_windows_find_what_keyword_windows_found(name, data, engine):
    words = WordSet(D._words().words, engine=engine, patterns=rule_set().presences())
    assert words.engine == engine and len(words.patterns) == len(COMMON)
    keywords_only = WordSet(words.words, engine=engine)
    now, before = _found(data, words), _found(data, keywords_only)
    assert now == before, (sorted(before - now)[:5], sorted(now - before)[:5])
    if name.startswith(("assignments", "planted")):
        assert {r for *_, r in now} & set(COMMON)  # the common rules do find things here
    if name == "edges":  # each match crosses a block's edge
        assert {v for _, _, v, _ in now} >= {"Tr0ub4dor3xyzQ9", "k9Fz2LqP0xVb7Ws3", JWT, VAULT,
                                             "LOBk9Fz2LqP0xVb7Ws3aa"}


def test_a_common_rule_reads_only_the_blocks_that_hold_its_presence():
    # 's.' (vault) and 'key' (generic) in every block, a vault token and an assignment in one
    rows = [f"2026-03-01 12:00:{i % 60:02d} INFO s.{i} publickey ok" for i in range(4000)]
    rows[2500] = f"2026-03-01 12:00:00 WARN vault {VAULT} and api_key = 'k9Fz2LqP0xVb7Ws3'"
    data = ("\n".join(rows) + "\n").encode()
    where = D._words().where(data)
    assert D._words().patterns  # the presence patterns compiled
    for rule in ("vault-service-token", "generic-api-key"):
        [(a, b)] = where.windows([f"rule:{rule}"])
        assert rows[2500].encode() in data[a:b] and b - a <= 3 * BLOCK + 400
    assert {f.value for f in rule_set().find(where)} >= {VAULT, "k9Fz2LqP0xVb7Ws3"}


def test_presence_is_a_prefix_of_a_led_rule_or_the_rule_itself():
    lead = "(?i)[\\w.-]{0,50}?"
    op = "(?:=|>|:{1,3}=|\\|\\||:|=>|\\?=|,)"
    assert presence(lead + "(?:etsy)(?:[ \\t\\w.-]{0,20})" + op + "([a-z0-9]{24})", True) == \
        ("(?i)(?:etsy)(?:[ \\t\\w.-]{0,20})" + op).encode()
    assert presence("\\b(ey[a-z]{17,})", False) == b"\\b(ey[a-z]{17,})"
    assert presence(lead + "(?:a)" + op + "x|y", True) is None  # two branches
    assert presence(lead + "(?:a)" + op + "?x", True) is None  # the operator optional
    assert presence(lead + "(?:a)[|(]" + op + "x", True) is not None  # '|' in a class
    assert presence(lead + "(?:a)x", True) is None  # no operator
    assert presence(lead + "(?:a" + op + "|b)x", True) is None  # the operator inside a group
