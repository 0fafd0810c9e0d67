"""The line patterns' RE2 twins (rlm.redact.dense.ascii_twin): on an ASCII line, the RE2 twin
of a Python pattern finds exactly the Python pattern's matches and groups. A log with a
key=value or a bearer token on every line read each line with Python's engine, ~11 us a line;
its twin takes ~5 (issue 21, item 4)."""

from __future__ import annotations

import random
import string
from pathlib import Path

import pytest

from rlm.redact import dense
from rlm.redact import detect as D

LOGHUB = sorted((Path(__file__).resolve().parents[2] / "evals" / "data" / "loghub").glob("*.log"))
TWINNED = [(name, py, group) for name, py, _, group, _ in D._RARE
           if dense.ascii_twin(py) is not None]
KEYS = ["password", "Password", "PASSWD", "pwd", "api_key", "api-key", "APIKEY", "access_token",
        "Access-Token", "auth_token", "secret", "secret_key", "client_secret", "private_key",
        "x_password", "mypassword", "token", "Token", "Bearer", "bearer", "BASIC", "Basic",
        "AKIA", "ASIA", "GB82", "DE89"]
GLUE = [" ", "  ", "\t", "\x0b", "\x0c", "\x1c", "\x1f", "=", ":", " = ", ":\x0b", '"', "'", "&",
        ",", ";", "<", ">", "@", "://", "https://", "ftp://u:", "/", "?", "#", ".", "_", "-"]


def _python(py, line: str, group: int) -> list[tuple[int, int]]:
    """What line_hits gave before twins: Python's engine over the line (ASCII: bytes = chars)."""
    return [m.span(group) for m in py.finditer(line) if m.span(group)[0] < m.span(group)[1]]


def _line(rnd: random.Random) -> str:
    parts = []
    for _ in range(rnd.randrange(3, 14)):
        r = rnd.random()
        if r < 0.1:  # whole shapes, or nearly: an AWS key id, a URL with a password
            up = string.ascii_uppercase + string.digits
            parts.append(rnd.choice(["AKIA", "ASIA", "AKIB"]) + "".join(
                rnd.choice(up) for _ in range(rnd.choice([15, 16, 17]))))
            parts.append(rnd.choice(["", " ", "x", "\x0b"]))
        elif r < 0.2:
            parts.append(rnd.choice(["https://", "ftp://", "x://", "s3+v2://"]) + rnd.choice(
                ["user:", "u:", "", "u:p ", "a b:"]) + rnd.choice(["pa55word", "p w", "x"])
                + rnd.choice(["@", "@host", " @", "\x0b@", "'@", "/@"]))
        elif r < 0.4:
            parts.append(rnd.choice(KEYS))
        elif r < 0.65:
            parts.append(rnd.choice(GLUE))
        else:
            alphabet = rnd.choice([string.ascii_letters + string.digits,
                                   string.ascii_uppercase + string.digits, "+/=._~-" + "aZ09"])
            parts.append("".join(rnd.choice(alphabet) for _ in range(rnd.randrange(2, 30))))
    return "".join(parts)


def test_the_patterns_that_have_twins():
    names = {name for name, _, _ in TWINNED}
    assert {"url", "auth", "kv", "aws", "iban"} <= names
    assert dense.ascii_twin(D._SSN) is None  # look-arounds: RE2 has none
    assert dense.ascii_twin(D._PHONE) is None


@pytest.mark.parametrize("name,py,group", TWINNED, ids=[t[0] for t in TWINNED])
def test_a_twin_finds_what_python_finds_on_random_ascii_lines(name, py, group):
    rnd = random.Random(name)
    hits = 0
    for _ in range(4000):
        line = _line(rnd)
        data = line.encode()
        want = _python(py, line, group)
        assert list(dense.line_hits(py, data, 0, len(data), group)) == want, repr(line)
        hits += bool(want)
    assert hits >= 20  # the lines hold the pattern often enough to tell


def test_a_vertical_tab_is_a_space_to_both():
    """Python's \\s takes \\x0b and \\x1c-\\x1f, RE2's does not: the twin says so itself."""
    for sep in ("\x0b", "\x1c", "\x1f"):
        line = f"password{sep}={sep}hunter2hunter2".encode()
        assert list(dense.line_hits(D._KV_SECRET, line, 0, len(line), 1)) == [(11, 25)]


def test_a_line_that_is_not_ascii_is_read_by_python():
    line = "password\u00a0= s3cr3t-value é".encode()  # a no-break space is a space to Python
    got = list(dense.line_hits(D._KV_SECRET, line, 0, len(line), 1))
    assert got == [(line.index(b"s3cr3t"), line.index(b"s3cr3t") + len(b"s3cr3t-value"))]


@pytest.mark.parametrize("path", LOGHUB, ids=[p.name for p in LOGHUB])
def test_real_log_lines_give_what_python_gives(path):
    for line in path.read_text("utf-8", "replace").splitlines():
        if not line.isascii():
            continue
        data = line.encode()
        for _, py, group in TWINNED:
            assert list(dense.line_hits(py, data, 0, len(data), group)) == \
                _python(py, line, group), line
