"""The detectors that fire on nearly every line of some logs (IPv4 and IPv6 addresses, e-mail
addresses, card numbers), as linear-time RE2 scans (IPv4: array operations, rlm.redact.ipv4) over the text's UTF-8 bytes with the meaning
of their Python patterns in rlm.redact.detect.

A Python pattern that starts with a look-behind (``(?<![\\w.])``) is tried at every position of
the text: on a log full of digits that runs at ~10 MB/s. RE2 has no look-arounds, so each
pattern here consumes the byte before the value instead (the text is given with a newline in
front), and the byte after is checked in Python. Where that check fails and a Python match
could still exist at another length (cards, e-mail addresses), the Python pattern reads that one
line; everywhere else the RE2 match is the answer. Word characters are ASCII here: a non-ASCII
letter next to a value does not hide it (Python's \\w would), so the difference is more
redaction, never less. tests/redact/test_redact_dense.py pins the equality on real logs.

Also here: an IPv4-shaped value that is a version (``version 0.0.0.6``, ``v 2.1.0.3``, a Windows
package's ``~amd64~~6.1.1.0``) is kept.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable, Iterable, Iterator

OCTET = rb"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_HEX = rb"[0-9A-Fa-f]"
PATTERNS = {  # each consumes the byte before its value, except ipv6 (a whole run)
    "ipv4": rb"[^0-9A-Za-z_.]" + OCTET + rb"(?:\." + OCTET + rb"){3}",
    "ipv6": _HEX + rb"*(?::" + _HEX + rb"*)*::[0-9A-Fa-f:]*|(?:" + _HEX + rb"{1,4}:){7}"
            + _HEX + rb"{1,4}",
    "email": rb"[^0-9A-Za-z_.%+-][A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@[A-Za-z0-9]"
             rb"(?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}"
             rb"[A-Za-z0-9])?)*\.[A-Za-z]{2,24}",
    # a first digit no issuer has (0, 1, 7-9) is no card whatever follows (is_card)
    "card": rb"[^0-9A-Za-z_-][2-6](?:[ -]?[0-9]){12,18}",
}
_WORD = frozenset(b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_DIGITS = frozenset(b"0123456789")
_IPV6_WHOLE = re.compile(r"(?:[0-9A-Fa-f]{0,4}:){2,7}(?:[0-9A-Fa-f]{1,4}|:)?")


def re2_options(latin1: bool = False, max_mem: int | None = None):
    """RE2's options for redaction: errors not logged; latin1: one byte is one character
    (offsets are byte offsets whatever the text holds; a class such as [^0-9] takes one byte
    of a multi-byte character, where in UTF-8 mode it would take the whole character)."""
    import re2

    o = re2.Options()
    o.log_errors = False
    if latin1:
        o.encoding = re2.Options.Encoding.LATIN1
    if max_mem:
        o.max_mem = max_mem
    return o


def re2_bytes(pattern: bytes, latin1: bool = False):
    """An RE2 pattern over bytes (see re2_options)."""
    import re2

    return re2.compile(pattern, re2_options(latin1))


def re2_set(patterns: Iterable[bytes], max_mem: int | None = None) -> tuple:
    """The patterns as one RE2 Set over bytes (Latin-1), and the index of a last pattern that
    every text matches (the canary): a Set whose DFA runs out of memory answers nothing, as if
    no pattern were there, and the canary's absence tells the two apart (see set_match)."""
    import re2

    s = re2.Set.SearchSet(re2_options(True, max_mem))
    for p in patterns:
        s.Add(p)
    canary = s.Add(b"^")
    s.Compile()
    return s._set, canary


def set_match(raw, canary: int, data: bytes, every: Iterable[int]) -> Iterable[int]:
    """The indexes of the patterns of re2_set's Set that data holds; all of `every` when the
    Set's DFA gave up on it."""
    got = raw.Match(data)
    return [k for k in got if k != canary] if canary in got else every


@lru_cache(maxsize=None)
def compiled(name: str):
    return re2_bytes(PATTERNS[name], latin1=True)


def spans(rx, data: bytes, start: int = 0, end: int | None = None) -> Iterator[tuple[int, int]]:
    """(start, end) of each leftmost match of the RE2 pattern rx in data[start:end], left to
    right, through RE2's own Match (the wrapper's match objects cost ~3x more per match)."""
    for groups in matches(rx, data, start, end):
        yield groups[0]


def found(rx, data: bytes) -> bool:
    """rx matches somewhere in data (RE2's own Match: the wrapper's str search costs ~5 us)."""
    import re2

    return rx._regexp.Match(re2._Anchor.UNANCHORED, data, 0, len(data))[0][0] >= 0


def matches(rx, data: bytes, start: int = 0, end: int | None = None) -> Iterator[list]:
    """The (start, end) of every group of each leftmost match of rx in data[start:end], as
    RE2's own Match gives them, left to right (what the wrapper's finditer finds)."""
    import re2

    raw, anchor = rx._regexp, re2._Anchor.UNANCHORED
    pos, n = start, len(data) if end is None else end
    while pos <= n:
        groups = raw.Match(anchor, data, pos, n)
        s, e = groups[0]
        if s < 0:
            return
        yield groups
        pos = e if e > s else s + 1


def after_ok(data: bytes, e: int, *, dot_digit: bool = False, dash: bool = False) -> bool:
    """The byte after a value is not a word character (nor '-' with `dash`, nor '.' then a
    digit with `dot_digit`)."""
    if e >= len(data):
        return True
    c = data[e]
    if c in _WORD or (dash and c == 0x2D):
        return False
    return not (dot_digit and c == 0x2E and e + 1 < len(data) and data[e + 1] in _DIGITS)


def ipv4(nl: bytes, out: list, kind: str = "IP") -> None:
    """_IPV4 less loopback, 0.0.0.0 and versions, appended to `out` as (start, end, kind) in
    the text's bytes (nl: the text with a newline in front). One RE2 match per address costs
    ~2 us, and an sshd log has 40,000 of them in 2 MB: a prompt goes through one Hyperscan
    pass where it is installed (rlm.redact.ipv4.scanned: no fixed cost to speak of), a large
    text through Hyperscan or array operations, by its addresses' density
    (rlm.redact.ipv4.large); without Hyperscan, through arrays when its dots are many, else
    RE2."""
    from rlm.redact import ipv4 as by_arrays

    found = by_arrays.large(nl) if len(nl) >= ARRAYS_ALWAYS else by_arrays.scanned(nl)
    if found is None:
        dots = nl.count(b".") if len(nl) < ARRAYS_ALWAYS else ARRAYS_FROM
        if dots < ARRAYS_FROM and (dots < 400 or dots * 25 < len(nl)):
            ipv4_matches(nl, out, kind)
            return
        found = by_arrays.spans(nl)
    starts, ends = found
    out.extend(zip([s - 1 for s in starts], [e - 1 for e in ends], [kind] * len(starts)))


# without Hyperscan: dots in a text from which arrays are cheaper than RE2 whatever the text,
# or from 400 when they are one byte in 25 (addresses on every line); measured on LogHub and
# an sshd log with two addresses a line, in prompts of 1 to 32 KB
ARRAYS_FROM = 4_000
# bytes from which the arrays' fixed cost (~250 us) is small enough for them to be worth
# choosing (rlm.redact.ipv4.large)
ARRAYS_ALWAYS = 1_000_000


def ipv4_matches(nl: bytes, out: list, kind: str = "IP") -> None:
    """ipv4 with one RE2 match per candidate. When the byte after fails, no other match starts
    inside the value: every position there follows a digit or a dot."""
    import re2

    from rlm.redact.ipv4 import kept

    raw, anchor, pos, n = compiled("ipv4")._regexp, re2._Anchor.UNANCHORED, 0, len(nl)
    match, word, digits, append = raw.Match, _WORD, _DIGITS, out.append
    while True:
        s, e = match(anchor, nl, pos, n)[0]
        if s < 0:
            return
        pos, s = e, s + 1
        if e < n and (nl[e] in word or (nl[e] == 0x2E and e + 1 < n and nl[e + 1] in digits)):
            continue
        if kept(nl, s, e):
            append((s - 1, e - 1, kind))


def ipv6(data: bytes, ok: Callable[[str], bool], start: int = 0, end: int | None = None
         ) -> Iterator[tuple[int, int]]:
    """_IPV6: its look-arounds (no word character or ':' on either side) make a match a whole
    run of word characters and colons, so a candidate counts only when it is such a run, of
    the right groups, and `ok` (an address, not loopback)."""
    for s, e in spans(compiled("ipv6"), data, start, end):
        before = data[s - 1] if s else 0x0A
        if before in _WORD or before == 0x3A or (e < len(data) and (data[e] in _WORD
                                                                   or data[e] == 0x3A)):
            continue
        v = data[s:e].decode("ascii")
        if _IPV6_WHOLE.fullmatch(v) and ok(v):
            yield s, e


def with_fallback(name: str, data: bytes, py: re.Pattern, dash: bool, start: int = 0,
                  end: int | None = None) -> Iterator[tuple[int, int]]:
    """E-mail addresses and card numbers: the RE2 candidate when the byte after it passes;
    else the Python pattern over the candidate's line, where a shorter match may pass (each
    line read once; a hit found twice is one hit to the overlap resolver)."""
    read_to = -1  # the end of the last line the Python pattern read: its hits are all there
    for s, e in spans(compiled(name), data, start, end):
        if s < read_to:
            continue
        if after_ok(data, e, dash=dash):
            yield s + 1, e
            continue
        a = data.rfind(b"\n", 0, s + 1) + 1
        b = data.find(b"\n", s + 1)
        read_to = len(data) if b < 0 else b
        yield from line_hits(py, data, a, read_to)


def line_hits(py: re.Pattern, data: bytes, a: int, b: int, group: int = 0
              ) -> Iterator[tuple[int, int]]:
    """The Python pattern's matches (its `group`) in the line data[a:b], in bytes: on an ASCII
    line, its RE2 twin's (ascii_twin), the same matches at a tenth of the cost (a log with a
    key=value or a bearer token on every line read each line with Python's engine)."""
    twin = ascii_twin(py)
    if twin is not None and data[a:b].isascii():
        for spans in matches(twin, data[a:b]):  # the line alone, as Python reads it
            i, j = spans[group]
            if i < j:
                yield a + i, a + j
        return
    line = data[a:b].decode("utf-8", "replace")
    ascii_line = len(line) == b - a
    for m in py.finditer(line):
        i, j = m.span(group)
        if i < 0 or i == j:
            continue
        if ascii_line:
            yield a + i, a + j
        else:
            bi = a + len(line[:i].encode("utf-8", "replace"))
            yield bi, bi + len(line[i:j].encode("utf-8", "replace"))


_PY_SPACE = r"\t\n\x0b\x0c\r\x1c-\x1f "  # what Python's \s matches among ASCII characters
_SAME_ESCAPES = set("bwd.-+/\\\"'[](){}?*|^$@#&:=,;<>!%~")  # mean the same to both engines on ASCII


@lru_cache(maxsize=None)
def ascii_twin(py: re.Pattern):
    r"""An RE2 pattern that matches exactly what `py` matches, with the same groups, on ASCII
    text; None when there is none. On ASCII text the two engines differ only in what `\s`
    means (Python's also takes \x0b and \x1c-\x1f), both taking the leftmost match and its
    groups as a backtracking engine would; a pattern with look-arounds (RE2 has none), other
    escapes or flags (but a leading `(?i)`: case folds alike on ASCII) has no twin."""
    inline_i = py.pattern.startswith("(?i)")  # the flag RE2 reads from the pattern too
    if py.flags & ~(re.UNICODE | (re.IGNORECASE if inline_i else 0)) or "(?<" in py.pattern \
            or "(?=" in py.pattern or "(?!" in py.pattern:
        return None
    out, in_class, i, pat = [], False, 0, py.pattern
    while i < len(pat):
        c = pat[i]
        if c == "\\":
            e = pat[i + 1:i + 2]
            if e == "s":
                out.append(_PY_SPACE if in_class else f"[{_PY_SPACE}]")
            elif e and e in _SAME_ESCAPES:
                out.append(c + e)
            else:
                return None
            i += 2
            continue
        if c == "[" and not in_class:
            in_class = True
            out.append(c)
            i += 1
            if pat[i:i + 1] == "^":
                out.append("^")
                i += 1
            if pat[i:i + 1] == "]":  # a ']' right after '[' is literal
                out.append("\\]")
                i += 1
            continue
        if c == "]" and in_class:
            in_class = False
        out.append(c)
        i += 1
    try:
        return re2_bytes("".join(out).encode(), latin1=True)
    except Exception:  # re2.error: RE2 cannot say it
        return None

