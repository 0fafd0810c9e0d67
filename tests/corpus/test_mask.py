"""The numpy mask is exactly the reference regex, on random and on real-format text."""

from __future__ import annotations

import random

import pytest

from rlm.corpus.mask import MASK_RE, mask_block
from rlm.fixtures.log_families import FAMILIES, family_lines


def test_random_bytes_mask_like_the_regex():
    rng = random.Random(1)
    alpha = b"abcdefxyzABCDEF0123456789_.:+-=/ #[]\n\t\xc3\xa9"
    for _ in range(5000):
        s = bytes(rng.choice(alpha) for _ in range(rng.randrange(0, 80)))
        if rng.random() < 0.2:
            s += b" deadbeefcafe" * rng.randrange(1, 3)
        if rng.random() < 0.05:
            s += b"a" * 300 + b"1" + b"b" * 10  # a token longer than the scan: exact fallback
        assert mask_block(s) == MASK_RE.sub(b"#", s), s


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_real_formats_mask_like_the_regex(family):
    block = ("\n".join(family_lines(family, 300)) + "\n").encode()
    masked = mask_block(block)
    assert masked == MASK_RE.sub(b"#", block)
    assert masked.count(b"\n") == block.count(b"\n")  # lines are never merged or split
