"""IPv4 addresses found by one Hyperscan pass, or with array operations (numpy), instead of one
regex match per address.

With Hyperscan (`scanned`): its pattern is an address with the byte before and the byte or two
after that _IPV4's look-arounds read, so it reports each address once and only whole ones;
where each starts and ends is read back from the report's end, and loopback, 0.0.0.0 and
versions are left out as below. LogHub in 32 KB prompts: 24-28 ms against RE2's 35-41; an
sshd log of two addresses a line, in 32 KB prompts: 62 ms against 114-139. From 1 MB, `large`
chooses Hyperscan or the arrays by the addresses' density (reading 40,000 reports back costs
more than the arrays). Without Hyperscan:

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
import threading
from functools import lru_cache

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
_WORD_OR_SPACE = bytes(c if chr(c).isascii() and (chr(c).isalnum() or c == 0x5F) else 0x20
                       for c in range(256)).lower()  # a word's bytes in lower case, else ' '
_VERSION_WORDS = (b"version", b"ver", b"v", b"rev", b"revision", b"build", b"firmware")
_VERSION_SET = frozenset(_VERSION_WORDS)


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


# rlm.redact.dense's OCTET (written again: dense imports this module when it runs, not when it
# is imported: numpy)
OCTET = rb"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
# one candidate a line: the address at its start (what _IPV4 takes there), else nothing
_AT_START = re.compile(rb"^(?:(" + OCTET + rb"(?:\." + OCTET + rb"){3})(?![0-9A-Za-z_]|\.[0-9]))?"
                       rb".*$", re.M)
# candidates from which reading the octets with arrays is cheaper than one regex pass over the
# windows: the arrays cost ~250 us a call whatever their length (~40 numpy operations), the
# regex ~1 us a candidate (HDFS: 863 candidates, 463 us each way)
OCTETS_BY_ARRAYS = 1_000


def _ends(pad: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Step 3: the end of the address starting at each of s, or -1 where none does, from the
    candidates' first 18 bytes."""
    ends = _ends_by_regex(pad, s) if len(s) < OCTETS_BY_ARRAYS else _ends_by_arrays(pad, s)
    return np.where((ends >= 0) & _not_local(pad, s, ends), ends, -1)


def _not_local(pad: np.ndarray, s: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Which of the addresses pad[s:e] are neither loopback (127.) nor 0.0.0.0."""
    win = pad[s[:, None] + np.arange(7)]  # an address has 7 bytes at least
    loopback = (win[:, 0] == 49) & (win[:, 1] == 50) & (win[:, 2] == 55) & (win[:, 3] == 46)
    zeros = ((e - s == 7) & (win[:, 0] == 48) & (win[:, 2] == 48) & (win[:, 4] == 48)
             & (win[:, 6] == 48))
    return ~loopback & ~zeros


def _ends_by_regex(pad: np.ndarray, s: np.ndarray) -> np.ndarray:
    """The windows, one a line, through one regex call for all of them."""
    win = pad[s[:, None] + np.arange(_W + 1)]
    win[win == 10] = 32  # a line end inside a window is a space: neither is a word character
    win[:, _W] = 10
    lengths = np.fromiter(map(len, _AT_START.findall(win.tobytes())), np.int64, len(s))
    return np.where(lengths > 0, s + lengths, -1)


def _ends_by_arrays(pad: np.ndarray, s: np.ndarray) -> np.ndarray:
    """The octets read with numpy, all candidates at once. The pattern's octet
    (`25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9]`) must be followed by '.', or, the fourth, by
    neither a word character nor '.' and a digit; no shorter octet is then followed by either
    (a digit follows it), so each octet is its whole run of digits: one to three of them, no
    leading zero, at most 255."""
    win = pad[s[:, None] + np.arange(_W)].astype(np.int16)
    digit = _DIGIT[win]
    rows = np.arange(len(s))
    at = np.zeros(len(s), np.int64)  # where the octet being read starts, in each window
    ok = np.ones(len(s), bool)
    for k in range(4):
        d0, d1, d2, d3 = (digit[rows, at + j] for j in range(4))
        two, three = d0 & d1, d0 & d1 & d2
        size = d0 + two.astype(np.int64) + three
        c0, c1, c2 = (win[rows, at + j] - 48 for j in range(3))
        value = np.where(three, c0 * 100 + c1 * 10 + c2, np.where(two, c0 * 10 + c1, c0))
        ok &= d0 & ~(three & d3) & ~(two & (c0 == 0)) & (value <= 255)
        after = win[rows, at + size]
        if k < 3:
            ok &= after == 46
            at = at + size + 1
        else:
            nxt = win[rows, at + size + 1]
            ok &= ~_WORD[after] & ~((after == 46) & _DIGIT[nxt])
            at = at + size
    return np.where(ok, s + at, -1)


def _versions(pad: np.ndarray, s: np.ndarray, nl: bytes) -> np.ndarray:
    """Which of s follow a version word, as VERSION_BEFORE reads the 24 bytes before:
    `\bversion`, `ver`, `v`, `rev`, `revision`, `build` or `firmware`, then spaces with at most
    one ':' or '=' among them; or a '~' right before."""
    gap = np.zeros(len(s), np.int64)  # how many spaces, ':' and '=' right before
    signs = np.zeros(len(s), np.int64)  # how many of them are ':' or '='
    rows = np.arange(len(s))
    for k in (1, 2):  # most gaps are a byte or two: rows still in one, over all rows
        b = pad[np.maximum(s[rows] - k, 0)]
        more = _SKIP[b] & (s[rows] - k > 0)
        rows, b = rows[more], b[more]
        gap[rows] += 1
        signs[rows] += (b == 0x3A) | (b == 0x3D)
    if len(rows):  # longer gaps (column-aligned logs): the rest of the 24 bytes at once (a
        # loop over them cost ~30 us a byte); 24 bytes of gap: no word fits in the view
        k = np.arange(3, 25)
        at = s[rows][:, None] - k
        before = pad[np.maximum(at, 0)]
        skip = _SKIP[before] & (at > 0)
        more = np.where(skip.all(axis=1), 22, np.argmin(skip, axis=1))
        gap[rows] += more
        signs[rows] += (((before == 0x3A) | (before == 0x3D)) & (k - 2 <= more[:, None])).sum(axis=1)
    end = s - gap - 1  # the last byte of the word
    tilde = pad[np.maximum(s - 1, 0)] == 0x7E
    maybe = np.flatnonzero(_VERSION_END[pad[end]] & (gap < 24) & (signs <= 1))
    if not len(maybe):
        return tilde  # no letter that ends a version word: the common case
    if len(maybe) <= 400:  # a few: in Python, ~1 us a row (the array checks below cost
        # ~500 us whatever their length: ~45 operations). The word is the run of word
        # characters that ends there, read from its last 9 bytes.
        words = [nl[max(0, e - 8):e + 1].translate(_WORD_OR_SPACE).rsplit(b" ", 1)[-1]
                 for e in end[maybe].tolist()]
        hit = [i for i, g, w in zip(maybe.tolist(), gap[maybe].tolist(), words)
               if w in _VERSION_SET and g + len(w) <= 24]
        tilde[hit] = True
        return tilde
    g, e = gap[maybe], end[maybe]
    word = np.zeros(len(maybe), bool)
    for w in _VERSION_WORDS:
        n = len(w)
        hit = (g + n <= 24) & (e - n >= 0) & ~_WORD[pad[np.maximum(e - n, 0)]]
        for j, ch in enumerate(w):
            hit &= (pad[np.maximum(e - n + 1 + j, 0)] | 0x20) == ch  # ASCII, any case
        word |= hit
    tilde[maybe[word]] = True
    return tilde


def spans(nl: bytes) -> tuple[list[int], list[int]]:
    """(starts, ends) in nl of its IPv4 addresses, less loopback, 0.0.0.0 and versions."""
    pad = np.frombuffer(nl + b"\0" * _W, np.uint8)
    s = _starts(pad, len(nl))
    if not len(s):
        return [], []
    e = _ends(pad, s)
    s, e = s[e >= 0], e[e >= 0]
    keep = ~_versions(pad, s, nl)
    return s[keep].tolist(), e[keep].tolist()


# an address (_IPV4's octets), the byte before it that `(?<![\w.])` allows, and after it what
# `(?![\w]|\.\d)` allows: one byte that is no word character nor '.', or '.' and a byte that
# is no digit, or the end (a '.' before it or not)
_SCANNED = (rb"[^0-9A-Za-z_.]" + OCTET + rb"(?:\." + OCTET + rb"){3}"
            rb"(?:[^0-9A-Za-z_.]|\.[^0-9]|\.?\z)")  # not $: it also matches before a last
# newline, and an address at the end would be reported twice
_DIGIT_OR_DOT = _table(b"0123456789.")
_ADDRESS_OR_SPACE = bytes(c if c in b"0123456789." else 0x20 for c in range(256))
_DIGITS = frozenset(b"0123456789")
_local = threading.local()  # a Hyperscan scratch space is one thread's
ONE_BY_ONE = 150  # reports read in Python below this: ~2 us each, the arrays ~200 us and ~1 us each


@lru_cache(maxsize=1)
def _database():
    """The pattern as a Hyperscan database, or None where the package is missing (or cannot
    compile it)."""
    try:
        import hyperscan

        db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        db.compile(expressions=[_SCANNED], ids=[0], elements=1, flags=0)
        return db
    except Exception:  # noqa: BLE001 - ImportError, or a build that cannot compile it
        return None


def scanned(nl: bytes, start: int = 0, end: int | None = None
            ) -> tuple[list[int], list[int]] | None:
    """(starts, ends) in nl of the IPv4 addresses in nl[start:end] (which starts with a
    newline, or the byte before its first line), less loopback, 0.0.0.0 and versions, by one
    Hyperscan pass; None without Hyperscan."""
    db = _database()
    end = len(nl) if end is None else end
    if db is None or end - start >= 1 << 31:  # a block scan takes an unsigned int's length
        return None
    scratch = getattr(_local, "scratch", None)
    if scratch is None:
        import hyperscan

        scratch = _local.scratch = hyperscan.Scratch(db)
    reports: list[int] = []
    add = reports.append
    part = nl if (start, end) == (0, len(nl)) else memoryview(nl)[start:end]  # no copy
    db.scan(part, match_event_handler=lambda _id, _from, to, _flags, _ctx: add(to),
            scratch=scratch)
    if start:
        reports = [to + start for to in reports]
    if len(reports) < ONE_BY_ONE:
        starts, ends = [], []
        for to in reports:
            e = to if nl[to - 1] in _DIGITS else to - 1 if nl[to - 2] in _DIGITS else to - 2
            # the address is the run of digits and dots that ends there
            address = nl[max(0, e - 16):e].translate(_ADDRESS_OR_SPACE).rsplit(b" ", 1)[-1]
            if kept(nl, e - len(address), e):
                starts.append(e - len(address))
                ends.append(e)
        return starts, ends
    pad = np.frombuffer(nl, np.uint8)  # no copy: nothing below reads past an address's
    # end (a copy of a large text costs more in fresh pages than the reading back)
    to = np.array(reports, np.int64)
    e = np.where(_DIGIT[pad[to - 1]], to, np.where(_DIGIT[pad[to - 2]], to - 1, to - 2))
    # the start: after the last byte before the end that is no digit nor '.' (an address is
    # at most 15 bytes; nl starts with a newline)
    before = pad[np.maximum(e[:, None] - np.arange(16, 0, -1), 0)]
    s = e - np.argmax(~_DIGIT_OR_DOT[before][:, ::-1], axis=1)
    keep = _not_local(pad, s, e)
    s, e = s[keep], e[keep]
    keep = ~_versions(pad, s, nl)
    return s[keep].tolist(), e[keep].tolist()


def large(nl: bytes) -> tuple[list[int], list[int]]:
    """`scanned` or `spans` for a text of 1 MB or more, whichever is cheaper for it: Hyperscan
    reports each address through a Python call (~1 us), and the arrays' cost grows with the
    candidate dots, not the addresses. Its first PROBE bytes are scanned; a text with an
    address every DENSE bytes or fewer there goes through the arrays (an sshd log of two
    addresses a line: 0.8x the time), others through Hyperscan (LogHub: 0.5x)."""
    cut = nl.find(b"\n", PROBE)
    head = scanned(nl, 0, cut) if cut > 0 else None
    if head is None or len(head[0]) * DENSE >= cut:
        return spans(nl)
    tail = scanned(nl, cut)  # from the newline before its first line
    if tail is None:  # over 2 GB: more than one Hyperscan block scan takes
        return spans(nl)
    return head[0] + tail[0], head[1] + tail[1]


PROBE = 65_536
DENSE = 200


# what right before an IPv4-shaped value makes it a version, not an address
VERSION_BEFORE = re.compile(rb"(?i)(?:\b(?:version|ver|v|rev|revision|build|firmware)\s*[:=]?\s*"
                            rb"|~)$")  # not 'release' (a DHCP release names an address)


def kept(nl: bytes, s: int, e: int) -> bool:
    """The address nl[s:e] is neither loopback, 0.0.0.0, nor a version."""
    if nl.startswith(b"127.", s) or nl[s:e] == b"0.0.0.0":
        return False
    i = s - 1  # past spaces, ':' and '=': could a version word end here?
    while i > 0 and nl[i] in b" \t:=":
        i -= 1
    return not (nl[i] in b"nNrRvVdDeE~" and VERSION_BEFORE.search(nl, max(0, s - 24), s))
