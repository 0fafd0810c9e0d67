"""A long name made of words of code is no key (rlm.redact.scan._named): a C header's OpenGL
names and a package's CamelCase classes passed every other test of the entropy detector and
were masked as secrets; random keys never have two such words."""

from __future__ import annotations

import random
import string

import pytest

from rlm.redact import scan
from rlm.redact.detect import detect

NAMES = ["glProgramUniformMatrix2x3fvEXT", "x14JsonEnumValueOptions",
         "glGetVertexArrayPointeri_vEXT", "MiniCPMv26ChatHandler", "bigIntAndBufferInt64Check"]


@pytest.mark.parametrize("name", NAMES)
def test_a_name_of_code_words_is_no_secret(name):
    assert not scan.looks_random(name)
    assert detect(f"extern void {name}(int);") == []


def test_random_keys_are_never_read_as_names(monkeypatch):
    rnd = random.Random(8)
    drawn = 0
    for alphabet in (string.ascii_letters + string.digits,
                     string.ascii_letters + string.digits + "-_"):
        for n in (20, 32, scan.NAME_MAX):
            for _ in range(15_000):
                key = "".join(rnd.choice(alphabet) for _ in range(n))
                with monkeypatch.context() as m:
                    m.setattr(scan, "_named", lambda tok: False)
                    passes = scan.looks_random(key)
                if passes:
                    drawn += 1
                    assert not scan._named(key), key
    assert drawn > 80_000
