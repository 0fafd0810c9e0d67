"""The detectors whose shapes are rare in a corpus (passwords in URLs, bearer and basic tokens,
``key=value`` credentials, AWS key ids, IBANs, US social security numbers, phone numbers, IPv6
addresses, card numbers): each pattern of rlm.redact.detect reads only the lines that hold its
shape, found by one RE2 pass over the bytes for all the shapes (400-550 MB/s of CPU on logs;
one DFA pass costs about the same whatever it looks for, so the card candidates share it). A shape
is its pattern with the byte before it taken where the pattern looks behind, and less the
look-aheads RE2 lacks, so it matches wherever the pattern could. (A word every match holds was
too wide: "publickey" holds "key", on every line of an sshd log.)
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
    # with the byte before that the pattern's look-behind allows (a version's '2.4+20151223'
    # is no phone number: dpkg's logs hold thousands of them, on lines of up to 8 KB)
    "iban": rb"(?:^|[^0-9A-Za-z_])[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]{4}){2}",
    "ssn": rb"(?:^|[^0-9A-Za-z_-])[0-9]{3}-[0-9]{2}-[0-9]{4}",
    # a '+' number: at least the 8 digits _phone_ok wants, at most ')', a separator and '('
    # between two of them (a time zone's '+0000', on every line of an access log, is none)
    "phone": rb"(?:^|[^0-9A-Za-z_+])\+[0-9](?:[ .()-]{0,3}[0-9]){7}"
             rb"|(?:^|[^0-9A-Za-z_(])\([0-9]{3}\)[ .-]?[0-9]{3}[ .-][0-9]{4}"
             rb"|(?:^|[^0-9A-Za-z_.-])[0-9]{3}[.-][0-9]{3}[.-][0-9]{4}",
    # "::" or 8 groups (7 colons): a clock's 08:00:00 is neither. A "::" only in a whole run
    # of hex digits and colons: C++ and Java names (IdoTransportMgr::SendPacket) are not
    "ipv6": rb"(?:^|[^0-9A-Za-z_:])[0-9A-Fa-f:]*::[0-9A-Fa-f:]*(?:$|[^0-9A-Za-z_:])"
            rb"|(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}",
    # rlm.redact.dense's card candidate, its byte before optional at the start of the text
    "card": rb"(?:^|[^0-9A-Za-z_-])[2-6](?:[ -]?[0-9]){12,18}",
}
_NAMES = tuple(_SHAPES)


@lru_cache(maxsize=1)
def _shapes_rx():
    """Any shape: only where a line holds one matters here."""
    return dense.re2_bytes(b"|".join(b"(?:" + _SHAPES[n] + b")" for n in _NAMES), latin1=True)


@lru_cache(maxsize=1)
def _shapes_set():
    """The shapes as one RE2 Set: which of them a line holds, wherever they start (the pass
    takes the leftmost match only, and a match can start inside another: an SSN inside a
    phone number's digits, a phone number inside a card candidate's). A last pattern that
    every line matches tells a Set whose DFA ran out of memory (it then says nothing)."""
    return dense.re2_set(_SHAPES[n] for n in _NAMES)


def shape_lines(data: bytes) -> dict[str, list[tuple[int, int]]]:
    """shape name -> the (start, end) byte ranges of the lines that hold it, in order: one RE2
    pass over the bytes finds the lines that hold any shape (from its first match, the rest of
    the line is skipped), then the Set says which shapes each of those lines holds."""
    import re2

    raw, anchor = _shapes_rx()._regexp, re2._Anchor.UNANCHORED
    which, canary = _shapes_set()
    every = range(len(_NAMES))
    out: dict[str, list[tuple[int, int]]] = {}
    pos, n = 0, len(data)
    while pos < n:
        s, e = raw.Match(anchor, data, pos, n)[0]
        if s < 0:
            break
        at = s + 1 if data[s] == 0x0A else s  # a shape's byte before: the line above's end
        a = data.rfind(b"\n", 0, at) + 1
        b = data.find(b"\n", max(at, e - 1))  # a key=value match may run on (its \s)
        b = n if b < 0 else b
        for k in dense.set_match(which, canary, data[a:b], every):
            out.setdefault(_NAMES[k], []).append((a, b))
        pos = b  # its newline: the byte before a card at the next line's start
    return out


def hits(pattern, data: bytes, lines, group: int):
    """(start, end) in bytes of the pattern's `group` on each of the lines."""
    for a, b in lines:
        yield from dense.line_hits(pattern, data, a, b, group)
