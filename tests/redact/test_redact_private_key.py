"""Private-key blocks are found where the pattern can start (rlm.redact.detect.
private_key_blocks): exactly what the pattern's finditer found trying every position, which ran
at 30 MB/s over source code that names PRIVATE KEY (issue 21, item 4)."""

from __future__ import annotations

import random
import sysconfig
from pathlib import Path

import pytest

from rlm.redact import detect as D

BODY = "MIIEowIBAAKCAQEA7x9Lq2mN8pQ4rS6tUvWxYz0AbCdEfGhIjKlMnOpQrStUvWxYz0123"
PIECES = ["-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----",
          "-----BEGIN OPENSSH PRIVATE KEY-----", "-----END PRIVATE KEY-----",
          "-----BEGIN ENCRYPTED PRIVATE KEY BLOCK-----", "-----END CERTIFICATE-----",
          "-----BEGIN CERTIFICATE-----", "const PRIVATE KEY = load()", "prose about a PRIVATE KEY",
          BODY, BODY[:16], BODY[:15], "> " + BODY, "# " + BODY, " " * 12 + BODY, " " * 13 + BODY,
          BODY + "  ", BODY + "\t", "x = 1", "", "-----END", "----END RSA PRIVATE KEY-----",
          "  -----END RSA PRIVATE KEY-----", "#" * 13 + "-----END RSA PRIVATE KEY-----",
          BODY + "\r", "Grüße " + BODY]


def _finditer(text: str) -> list:
    return [(m.span(), m.groups()) for m in D._PRIVATE_KEY_BLOCK.finditer(text)]


def _found(text: str) -> list:
    return [(m.span(), m.groups()) for m in D.private_key_blocks(text)]


@pytest.mark.parametrize("seed", range(300))
def test_random_key_blocks_are_found_as_finditer_found_them(seed):
    rnd = random.Random(seed)
    lines = [rnd.choice(PIECES) for _ in range(rnd.randrange(1, 40))]
    text = "\n".join(lines) + rnd.choice(["", "\n", " tail"])
    assert _found(text) == _finditer(text)


def test_blocks_without_their_begin_or_end_line_are_found():
    whole = f"-----BEGIN RSA PRIVATE KEY-----\n{BODY}\n{BODY}\n-----END RSA PRIVATE KEY-----\n"
    no_begin = f"log line\n{BODY}\n{BODY}\n-----END RSA PRIVATE KEY-----\n"
    no_end = f"-----BEGIN RSA PRIVATE KEY-----\n{BODY}\n{BODY}\n"
    for text in (whole, no_begin, no_end, whole + no_begin + no_end):
        assert _found(text) == _finditer(text) != []


SOURCES = [p for p in sorted(Path(sysconfig.get_paths()["purelib"]).rglob("*.py"))
           if "PRIVATE KEY" in p.read_text("utf-8", "replace")][:20]


@pytest.mark.parametrize("path", SOURCES, ids=[p.name for p in SOURCES])
def test_installed_source_that_names_private_keys_gives_the_same_blocks(path):
    text = path.read_text("utf-8", "replace")
    assert _found(text) == _finditer(text)
