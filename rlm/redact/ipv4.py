"""IPv4 addresses found with array operations (numpy) instead of one regex match per address.

Any regex engine called from Python costs about 2 µs per match; a log with two addresses a line
has 40,000 of them in 2 MB, so matching alone held redaction near 10 MB/s. Here every step is
one operation over the text or over the candidates:

1. the dots with a digit on each side, and among them the ones that start a run of three, each
   two to four bytes after the one before (an address's dots);
2. where the digits before the first dot start (one to three, after a byte that is no word
   character nor '.': `(?<![\\w.])`);
3. each candidate's first 18 bytes, one a line, through one regex call for all of them: four
   canonical octets (0-255, no leading zero) split by dots, and after the fourth neither a word
   character nor '.' and a digit (`(?![\\w]|\\.\\d)`).

The result is what rlm.redact.detect._IPV4 finds, less loopback, 0.0.0.0 and versions (the
checks of rlm.redact.dense.ipv4); tests/redact/test_redact_dense.py compares the two on real
logs and on random text made of digits, dots and separators.
"""

from __future__ import annotations

import re

import numpy as np

_W = 18  # an address is at most 15 bytes; the two bytes after it decide


def _table(chars: bytes) -> np.ndarray:
    t = np.zeros(256, bool)
    t[list(chars)] = True
    return t


_LETTERS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_"
_DIGIT = _table(b"0123456789")
_WORD = _table(b"0123456789" + _LETTERS)
_NOT_BEFORE = _table(b"0123456789." + _LETTERS)
_VERSION_END = _table(b"nNrRvVdDeE")  # the last letter of a version word
_SKIP = _table(b" \t:=")  # what may stand between a version word and its number
_VERSION_WORDS = (b"version", b"ver", b"v", b"rev", b"revision", b"build", b"firmware")


def _starts(pad: np.ndarray, n: int) -> np.ndarray:
    """Where an address could start: steps 1 and 2."""
    raw = pad[:n]
    q = np.flatnonzero(raw == 46)
    q = q[(q >= 2) & (q < n - 1)]
    q = q[_DIGIT[raw[q - 1]] & _DIGIT[raw[q + 1]]]
    if len(q) < 3:
        return q[:0]
    g1, g2 = q[1:-1] - q[:-2], q[2:] - q[1:-1]
    q = q[:-2][(g1 >= 2) & (g1 <= 4) & (g2 >= 2) & (g2 <= 4)]
    d2, d3, d4 = _DIGIT[raw[q - 2]], _DIGIT[raw[q - 3]], _DIGIT[pad[np.maximum(q - 4, 0)]]
    s = q - (1 + d2 + (d2 & d3))
    return s[~(d2 & d3 & d4) & ~_NOT_BEFORE[raw[s - 1]]]


# rlm.redact.dense's OCTET (written again: dense imports this module)
OCTET = rb"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
# one candidate a line: the address at its start (what _IPV4 takes there), else nothing
_AT_START = re.compile(rb"^(?:(" + OCTET + rb"(?:\." + OCTET + rb"){3})(?![0-9A-Za-z_]|\.[0-9]))?"
                       rb".*$", re.M)


def _ends(pad: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Step 3: the end of the address starting at each of s, or -1 where none does. The
    candidates' first bytes, one a line, go through one regex pass (numpy for the 18 bytes of
    each; Python's regex engine, in C, for the octets: one call for all of them)."""
    win = pad[s[:, None] + np.arange(_W + 1)]
    win[win == 10] = 32  # a line end inside a window is a space: neither is a word character
    win[:, _W] = 10
    lengths = np.fromiter(map(len, _AT_START.findall(win.tobytes())), np.int64, len(s))
    ok = lengths > 0
    ok &= ~((win[:, 0] == 49) & (win[:, 1] == 50) & (win[:, 2] == 55) & (win[:, 3] == 46))  # 127.
    ok &= ~((lengths == 7) & (win[:, 0] == 48) & (win[:, 2] == 48) & (win[:, 4] == 48)
            & (win[:, 6] == 48))  # 0.0.0.0
    return np.where(ok, s + lengths, -1)


def _versions(pad: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Which of s follow a version word, as dense._VERSION_BEFORE reads the 24 bytes before:
    `\bversion`, `ver`, `v`, `rev`, `revision`, `build` or `firmware`, then spaces with at most
    one ':' or '=' among them; or a '~' right before."""
    gap = np.zeros(len(s), np.int64)  # how many spaces, ':' and '=' right before
    signs = np.zeros(len(s), np.int64)  # how many of them are ':' or '='
    rows = np.arange(len(s))
    for k in range(1, 25):  # rows still in a gap: few after the first byte or two
        b = pad[np.maximum(s[rows] - k, 0)]
        more = _SKIP[b] & (s[rows] - k > 0)
        rows, b = rows[more], b[more]
        if not len(rows):
            break
        gap[rows] += 1
        signs[rows] += (b == 0x3A) | (b == 0x3D)
    else:
        gap[rows] = 24  # 24 bytes of gap: no word fits in the regex's view
    end = s - gap - 1  # the last byte of the word
    tilde = pad[np.maximum(s - 1, 0)] == 0x7E
    if not (_VERSION_END[pad[end]] & (gap < 24)).any():
        return tilde  # no letter that ends a version word: the common case
    word = np.zeros(len(s), bool)
    for w in _VERSION_WORDS:
        n = len(w)
        hit = (gap + n <= 24) & (end - n >= 0) & ~_WORD[pad[np.maximum(end - n, 0)]]
        for j, ch in enumerate(w):
            hit &= (pad[np.maximum(end - n + 1 + j, 0)] | 0x20) == ch  # ASCII, any case
        word |= hit
    return (word & (signs <= 1)) | tilde


def spans(nl: bytes) -> tuple[list[int], list[int]]:
    """(starts, ends) in nl of its IPv4 addresses, less loopback, 0.0.0.0 and versions."""
    pad = np.frombuffer(nl + b"\0" * _W, np.uint8)
    s = _starts(pad, len(nl))
    if not len(s):
        return [], []
    e = _ends(pad, s)
    s, e = s[e >= 0], e[e >= 0]
    keep = ~_versions(pad, s)
    return s[keep].tolist(), e[keep].tolist()
