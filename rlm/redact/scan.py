"""What makes redaction fast, and what catches secrets no rule names.

- `shape_views`: one linear-time RE2 pass finds, for each line pattern of rlm.redact.detect, the lines
  that hold its shape (the pattern without the look-arounds RE2 lacks, or a part every match
  contains); each pattern then reads only its own lines, and its hits are mapped back. A log
  full of IP addresses runs the IP pattern on every line, and the others on almost none.
- `entropy_hits`: long random-looking strings (mixed case and digits, or symbol-rich like a
  Django secret key) that no rule names and no keyword announces: an API key pasted in prose,
  one line of a private key sent without its BEGIN/END lines. Ids survive: a UUID, a hex hash,
  a block id, a counter or a CamelCase name has one case, few digits, or too few changes of
  character class for a random string.
- RE2 reads bytes here: given a str, the google-re2 wrapper encodes the whole text again at every
  match (quadratic). `Encoded` maps byte offsets back to characters.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

TOKEN_MIN = 20  # entropy tokens: at least this long
SHAPES = {  # name -> what every match of that detector in rlm.redact.detect contains
    "url": rb"://",
    "keyword": rb"(?i:bearer|basic|token|api[_-]?key|apikey|secret|password|passwd|pwd|"
               rb"private[_-]?key|account[_-]?key)",
    "aws": rb"(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}",
    "email": rb"[A-Za-z0-9]@[A-Za-z0-9]",
    "card": rb"\d(?:[ -]?\d){12,18}",
    "iban": rb"[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2}",
    "ssn": rb"\d{3}-\d{2}-\d{4}",
    "phone": rb"\+\d{1,3}[ .(-]*\d|\(\d{3}\)|\d{3}[.-]\d{3}[.-]\d{4}",
    "ipv4": rb"\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}",
    # "::" or 8 groups (7 colons): a clock's 08:00:00 is neither
    "ipv6": rb"::|(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}",
}
_NAMES = tuple(SHAPES)
_WORDY = re.compile(r"(?:^|[/_~+.-])[A-Z]?[a-z]{2,11}(?:$|[/_~+.-])")
# each character's class, for counting changes of class along a token
_CLASS = str.maketrans({**{c: "u" for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"},
                        **{c: "l" for c in "abcdefghijklmnopqrstuvwxyz"},
                        **{c: "d" for c in "0123456789"}})


def re2_bytes(pattern: bytes):
    import re2

    o = re2.Options()
    o.log_errors = False
    return re2.compile(pattern, o)


@lru_cache(maxsize=1)
def _shapes_rx():
    return re2_bytes(b"|".join(b"(" + SHAPES[n] + b")" for n in _NAMES))


@lru_cache(maxsize=1)
def _token_rx():
    # base64/base62 keys (padding at the end only), or 40+ symbol-rich characters (a Django key;
    # '=' and '&' are left out there, or `a=b&c=d` query strings would read as one token)
    return re2_bytes(rb"([A-Za-z0-9+/_~-]{20,}={0,2})|([A-Za-z0-9!@#$%^*()_+-]{40,})")


class Encoded:
    """A str as UTF-8 bytes, with byte offsets mapped back to character offsets (free for
    ASCII; otherwise incrementally, for offsets given in increasing order)."""

    def __init__(self, text: str):
        self.text = text
        self.data = text.encode("utf-8", "surrogatepass")
        self.ascii = len(self.data) == len(text)
        self._b = self._c = 0

    def char(self, off: int) -> int:
        if self.ascii:
            return off
        if off < self._b:
            self._b = self._c = 0
        self._c += len(self.data[self._b:off].decode("utf-8", "replace"))
        self._b = off
        return self._c


@dataclass
class LineView:
    """The candidate lines of a text, joined by newlines, and the way back to the text."""

    text: str
    starts: list[int]  # where each kept line starts in `text`
    origins: list[int]  # where it starts in the original

    def to_original(self, pos: int) -> int:
        i = bisect_right(self.starts, pos) - 1
        return self.origins[i] + pos - self.starts[i]

    def same_line(self, a: int, b: int) -> bool:
        return bisect_right(self.starts, a) == bisect_right(self.starts, max(a, b - 1))


def shape_views(text: str) -> dict[str, LineView]:
    """name -> the lines of text that hold that shape (absent: none do)."""
    enc = Encoded(text)
    data = enc.data
    lines: dict[str, list[tuple[int, int]]] = {}
    for (start, end), k in _shape_matches(data):
        a = data.rfind(b"\n", 0, start) + 1
        got = lines.setdefault(_NAMES[k - 1], [])
        if not got or got[-1][0] != a:
            b = data.find(b"\n", start)
            got.append((a, len(data) if b < 0 else b))
    return {name: _view(enc, spans) for name, spans in lines.items()}


def _shape_matches(data: bytes, rx=None):
    """((start, end), group number) of each match of rx (default: the shapes), left to right.
    Through RE2's own Match when the wrapper exposes it: the wrapper's match objects cost ~3x
    more per match."""
    import re2

    rx, pos, n = rx or _shapes_rx(), 0, len(data)
    raw, anchor = getattr(rx, "_regexp", None), getattr(re2, "_Anchor", None)
    while pos <= n:
        if raw is not None and anchor is not None:
            spans = raw.Match(anchor.UNANCHORED, data, pos, n)
            if spans[0][0] < 0:
                return
            span, k = spans[0], next(i for i in range(1, len(spans)) if spans[i][0] >= 0)
        else:
            m = rx.search(data, pos)
            if m is None:
                return
            span, k = m.span(), m.lastindex
        yield span, k
        pos = max(span[1], span[0] + 1)


def _view(enc: Encoded, spans: list[tuple[int, int]]) -> LineView:
    parts: list[str] = []
    starts: list[int] = []
    origins: list[int] = []
    at = 0
    for a, b in spans:
        line = enc.data[a:b].decode("utf-8", "replace")
        starts.append(at)
        origins.append(enc.char(a))
        parts.append(line)
        at += len(line) + 1
    return LineView("\n".join(parts), starts, origins)


def shannon(s: str) -> float:
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values()) if n else 0.0


def looks_random(tok: str) -> bool:
    """A long token that reads as a key, not an id. Base64/base62 keys mix upper and lower case
    with digits, change character class at about 6 characters in 10, and come close to the
    entropy of their length; a symbol-rich one (a Django secret key) mixes symbols in."""
    n = len(tok)
    if n < TOKEN_MIN:
        return False
    cls = tok.translate(_CLASS)
    upper, lower, digits = cls.count("u"), cls.count("l"), cls.count("d")
    symbols = n - upper - lower - digits
    if _WORDY.search(tok):
        return False  # a path or a name (apps/x86_64/system, AirPortBrcm4360_Logs-001): a
        # separator-delimited word, which a random key rarely has
    alnum = [c for c in cls if c in "uld"]
    changes = sum(1 for x, y in zip(alnum, alnum[1:]) if x != y)
    if changes < 0.35 * len(alnum):
        return False
    floor = 0.82 * math.log2(min(n, 64))
    if symbols >= 3 and lower + upper >= 10 and digits >= 2:
        return shannon(tok) >= floor
    least = 2 if n >= 32 else 3
    if upper < least or lower < least or digits < (1 if n >= 32 else 2):
        return False
    return shannon(tok) >= floor


def entropy_hits(text: str):
    """(start, end, value) of the random-looking tokens in text."""
    enc = Encoded(text)
    for (start, end), _ in _shape_matches(enc.data, _token_rx()):
        raw = enc.data[start:end]
        lead = len(raw) - len(raw.lstrip(b"-_~/+"))
        tok = raw[lead:].decode("ascii")
        if looks_random(tok):
            a = enc.char(start + lead)
            yield a, a + len(tok), tok
