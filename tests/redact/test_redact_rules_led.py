"""gitleaks' rules that start with a lead (`(?i)[\\w.-]{0,50}?`) are matched from their probe's
matches (rlm.redact.rules.led_matches): the same matches, groups and all, as the rule matched
over the whole text, on real logs, the planted secrets and text made of what the lead and the
keywords are about (issue 21, item 4)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from rlm.redact.dense import matches
from rlm.redact.rules import led_matches, rule_set
from tests.planted_secrets import KINDS, keyed_line, prose_line

LOGS = sorted((Path(__file__).resolve().parents[2] / "evals" / "data" / "loghub").glob("*.log"))
LED = [r for r in rule_set().rules if r.probe is not None]


def _assignments(seed: int) -> bytes:
    """Keyword-and-value lines with long word runs before the keyword (longer than the lead's
    50), separators and values of every length, several to a line."""
    rnd = random.Random(seed)
    words = ["key", "api", "token", "secret", "password", "passwd", "auth", "access", "creds",
             "API", "Api", "client", "heroku", "slack", "github", "npm", "stripe", "pypi"]
    seps = [" = ", "=", ": ", ":=", " => ", "||", ",", "\t=\t", ":\n", " ?= "]
    vals = ["".join(rnd.choice("abcdef0123456789ABCDEFxyz_-.=/+") for _ in range(n))
            for n in (4, 9, 10, 12, 16, 24, 32, 40, 64, 151)]
    lines = []
    for _ in range(3_000):
        parts = []
        for _ in range(rnd.randint(1, 3)):
            lead = "".join(rnd.choice("ab_.-9") for _ in range(rnd.choice([0, 3, 49, 50, 51, 80])))
            parts.append(lead + rnd.choice(words) + rnd.choice(["", "_id", "-x"])
                         + rnd.choice(seps) + rnd.choice(["", "'", '"']) + rnd.choice(vals)
                         + rnd.choice(["", "'", '"', ";", " ", "\\n"]))
        lines.append(" ".join(parts))
    return "\n".join(lines).encode()


def _texts() -> list[tuple[str, bytes]]:
    planted = "\n".join([keyed_line(k) for k in KINDS] + [prose_line(k) for k in KINDS])
    return ([(p.name, p.read_bytes()) for p in LOGS] + [("planted", planted.encode())]
            + [(f"assignments-{s}", _assignments(s)) for s in (1, 2)])


@pytest.mark.parametrize("name,data", _texts(), ids=[n for n, _ in _texts()])
def test_led_rules_match_as_over_the_whole_text(name, data):
    assert len(LED) > 50  # gitleaks' generic rules and their kin
    seen = 0
    for rule in LED:
        for a, b in ((0, len(data)), (len(data) // 3, 2 * len(data) // 3)):
            whole = [list(g) for g in matches(rule.rx, data, a, b)]
            assert [list(g) for g in led_matches(rule, data, a, b)] == whole, rule.id
            seen += len(whole)
    if name.startswith("assignments"):
        assert seen > 500  # the text is about the rules: it must match them
