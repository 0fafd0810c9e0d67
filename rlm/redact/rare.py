"""The detectors whose shapes are rare in a corpus (passwords in URLs, bearer and basic tokens,
``key=value`` credentials, AWS key ids, IBANs, US social security numbers, phone numbers, IPv6
addresses): each Python pattern of rlm.redact.detect reads only the lines that can hold a match.

Those lines are found by a word every match holds (LITERALS, through the blocks' word Set of
rlm.redact.blocks), or, for the patterns with no such word, by one RE2 pass over the bytes for
all their shapes (each its pattern less the look-arounds RE2 lacks, so it matches wherever the
pattern could).
"""

from __future__ import annotations

from functools import lru_cache

from rlm.redact import dense

LITERALS = {  # detector -> lower-case words one of which is in every match (rlm.redact.blocks)
    "url": (b"://",),
    "auth": (b"bearer", b"basic", b"token"),
    "kv": (b"key", b"token", b"secret", b"passw", b"pwd"),
    "aws": (b"akia", b"asia", b"abia", b"acca", b"agpa", b"aida", b"aroa", b"anpa", b"anva",
            b"aipa"),
}
_SHAPES = {  # detector -> what every match matches (its pattern less the look-arounds), for
    # those with no word to look for
    "iban": rb"[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]{4}){2}",
    "ssn": rb"[0-9]{3}-[0-9]{2}-[0-9]{4}",
    "phone": rb"\+[0-9]{1,3}(?:[ .-]?\(?[0-9]{1,4}\)?){2,5}|\([0-9]{3}\)[ .-]?[0-9]{3}[ .-]"
             rb"[0-9]{4}|[0-9]{3}[.-][0-9]{3}[.-][0-9]{4}",
    # "::" or 8 groups (7 colons): a clock's 08:00:00 is neither
    "ipv6": rb"::|(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}",
}
_NAMES = tuple(_SHAPES)


@lru_cache(maxsize=1)
def _shapes_rx():
    return dense.re2_bytes(b"|".join(b"(" + _SHAPES[n] + b")" for n in _NAMES), latin1=True)


def shape_lines(data: bytes) -> dict[str, list[tuple[int, int]]]:
    """shape name -> the (start, end) byte ranges of the lines that hold it, in order (one
    RE2 pass for all of _SHAPES)."""
    import re2

    rx = _shapes_rx()
    raw, anchor = rx._regexp, re2._Anchor.UNANCHORED
    out: dict[str, list[tuple[int, int]]] = {}
    pos, n = 0, len(data)
    while pos <= n:
        groups = raw.Match(anchor, data, pos, n)
        s, e = groups[0]
        if s < 0:
            break
        k = next(i for i in range(1, len(groups)) if groups[i][0] >= 0)
        a = data.rfind(b"\n", 0, s) + 1
        got = out.setdefault(_NAMES[k - 1], [])
        if not got or got[-1][0] != a:
            b = data.find(b"\n", s)
            got.append((a, n if b < 0 else b))
        pos = e if e > s else s + 1
    return out


def hits(pattern, data: bytes, lines, group: int):
    """(start, end) in bytes of the pattern's `group` on each of the lines."""
    for a, b in lines:
        yield from dense.line_hits(pattern, data, a, b, group)
