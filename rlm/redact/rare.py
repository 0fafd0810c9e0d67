"""The detectors whose shapes are rare in a corpus (passwords in URLs, bearer and basic tokens,
``key=value`` credentials, AWS key ids, IBANs, US social security numbers, phone numbers, IPv6
addresses): each Python pattern of rlm.redact.detect reads only the lines that hold its shape,
found by one RE2 pass over the bytes for all the shapes (400-550 MB/s of CPU on logs). A shape
is its pattern less the look-arounds RE2 lacks, so it matches wherever the pattern could. (A
word every match holds was too wide: "publickey" holds "key", on every line of an sshd log.)
"""

from __future__ import annotations

from functools import lru_cache

from rlm.redact import dense

_SPACE = rb"[\s\x80-\xff]"  # Unicode spaces are bytes >= 0x80 here
_SHAPES = {  # detector -> what every match of its Python pattern matches (the pattern less the
    # look-arounds RE2 lacks, or a part of it: a URL's password from '://' on)
    "url": rb"://[^\s:/?#@'\"]+:[^\s/?#@'\"]+@",
    "auth": rb"(?i:bearer|basic|token)" + _SPACE + rb"+[A-Za-z0-9._~+/-]{8}",
    "kv": rb"(?i:api[_-]?key|apikey|access[_-]?token|auth[_-]?token|secret(?:[_-]?key)?|"
          rb"secret[_-]?access[_-]?key|account[_-]?key|session[_-]?token|client[_-]?secret|"
          rb"password|passwd|pwd|private[_-]?key)[\"']?" + _SPACE + rb"*[=:]",
    "aws": rb"(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}",
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
