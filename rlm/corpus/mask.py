"""Mask variable tokens in a block of log lines at memory speed.

A token is a maximal run of `[A-Za-z0-9_.:+-]`; a token that contains a digit (timestamps,
ids, counts, IPs, versions) becomes `#`, and so does a digit-free hex run of 8+ letters on word
boundaries. That is exactly `MASK_RE.sub(b"#", block)`, but Python's `re` pays ~0.3 us per
match and a log line has five or more matches (10-30 MB/s); Rust's regex through Polars pays
~0.1 us a match. Here the mask is computed with whole-array numpy operations on the block:
token and digit flags by range compares, packed into uint64 bit arrays, a segmented OR that
spreads "has a digit" along each token in log2 shift steps (64 bytes per machine word), then
one compress drops the masked bytes. Newlines are never token bytes, so the masked block
splits into exactly the same lines as the original.
"""

from __future__ import annotations

import re

import numpy as np

MASK_RE = re.compile(rb"[A-Za-z0-9_.:+-]*[0-9][A-Za-z0-9_.:+-]*|\b[0-9a-fA-F]{8,}\b")
# cheap pre-check for the hex rule: 8 hex letters in a row, found by a substring search
_HEX_MAP = bytes(0x78 if chr(i) in "abcdefABCDEF" else 0x20 for i in range(256))
_X_RUN = re.compile(rb"xxxxxxxx+")
_WORD = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
LEVELS = 8  # the scan spreads over 2**LEVELS bytes; longer tokens fall back to the regex
HASH = 0x23


_U8 = np.uint8


def _flags(block: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The block as uint8, and its token and digit flags (vectorised range compares: ~10x
    faster than bytes.translate)."""
    arr = np.frombuffer(block, np.uint8)
    digit = (arr - _U8(0x30)) < _U8(10)
    tok = ((arr | _U8(0x20)) - _U8(0x61)) < _U8(26)  # letters
    tok |= (arr - _U8(0x2B)) < _U8(16)  # + , - . / 0-9 :
    tok &= arr != _U8(0x2C)  # not ','
    tok &= arr != _U8(0x2F)  # not '/'
    tok |= arr == _U8(0x5F)  # _
    return arr, tok, digit


def _pack(flags: np.ndarray, words: int) -> np.ndarray:
    """Bool flags as a little-endian uint64 bit array (bit i = flag i)."""
    buf = np.zeros(words * 8, np.uint8)
    bits = np.packbits(flags, bitorder="little")
    buf[: len(bits)] = bits
    return buf.view(np.uint64)


def _unpack(bits: np.ndarray, n: int) -> np.ndarray:
    return np.unpackbits(bits.view(np.uint8), count=n, bitorder="little").view(np.bool_)


def _up(x: np.ndarray, k: int) -> np.ndarray:
    """Bit i moves to bit i+k (zeros shift in)."""
    w, b = divmod(k, 64)
    out = np.zeros_like(x)
    src, dst = (x[: len(x) - w] if w else x), out[w:]
    if b:
        np.left_shift(src, np.uint64(b), out=dst)
        dst[1:] |= src[:-1] >> np.uint64(64 - b)
    else:
        dst[:] = src
    return out


def _down(x: np.ndarray, k: int) -> np.ndarray:
    """Bit i+k moves to bit i (zeros shift in)."""
    w, b = divmod(k, 64)
    out = np.zeros_like(x)
    src, dst = x[w:], (out[: len(x) - w] if w else out)
    if b:
        np.right_shift(src, np.uint64(b), out=dst)
        dst[:-1] |= src[1:] << np.uint64(64 - b)
    else:
        dst[:] = src
    return out


def mask_block(block: bytes) -> bytes:
    """`MASK_RE.sub(b"#", block)`, computed with numpy on bit arrays (identical output)."""
    n = len(block)
    if n < 2:
        return MASK_RE.sub(b"#", block)
    arr, tokf, digf = _flags(block)
    words = (n + 63) // 64
    tok = _pack(tokf, words)
    right = _pack(digf, words)
    left = right.copy()
    link = tok & _up(tok, 1)  # bit i: bytes i-1 and i are in one token
    # segmented OR in log2 steps: "has a digit" spreads right, then left, inside each token
    links, span, k = [], link, 1
    for _ in range(LEVELS):
        links.append(span)
        right |= _up(right, k) & span
        nxt = span & _up(span, k)  # runs of 2k links
        if k >= 4 and not nxt.any():
            break  # no token is longer than 2k bytes: every token is covered
        span, k = nxt, k * 2
    k = 1
    for span in links:
        left |= _down(left & span, k)
        k *= 2
    masked = right | left
    prev = _up(masked, 1)
    if (link & (masked ^ prev)).any():
        return MASK_RE.sub(b"#", block)  # a token longer than the scan: exact fallback
    first = _unpack(masked & ~prev, n)  # first byte of each masked token becomes '#'
    keep = _unpack(~masked | (masked & ~prev), n)
    delta = arr - _U8(HASH)
    delta *= first.view(np.uint8)
    res = np.compress(keep, arr - delta).tobytes()
    return _mask_hex_words(res)


def _mask_hex_words(res: bytes) -> bytes:
    """The rule's second half on the digit-masked text: a run of 8+ hex letters that is a
    whole word. A literal-prefix search over a translated copy finds the runs (fast); only
    those are checked for word boundaries."""
    hexes = res.translate(_HEX_MAP)
    if b"xxxxxxxx" not in hexes:
        return res
    out, last = [], 0
    for m in _X_RUN.finditer(hexes):
        a, b = m.span()
        if (a and res[a - 1] in _WORD) or (b < len(res) and res[b] in _WORD):
            continue  # part of a longer word: not on word boundaries
        out += [res[last:a], b"#"]
        last = b
    return b"".join(out) + res[last:] if out else res
