"""What catches secrets no rule names, and the RE2 plumbing the fast detectors share.

- `entropy_hits`: long random-looking strings (mixed case and digits, or symbol-rich like a
  Django secret key) that no rule names and no keyword announces: an API key pasted in prose,
  one line of a private key sent without its BEGIN/END lines. Ids survive: a UUID, a hex hash,
  a block id, a counter or a CamelCase name has one case, few digits, or too few changes of
  character class for a random string. One RE2 pass picks only the runs that could pass (upper
  and lower case and a digit, or three symbols and two digits, or a symbol-rich run): on a log,
  most long tokens (paths, block ids, hex) never reach Python.
- RE2 reads bytes here: given a str, the google-re2 wrapper encodes the whole text again at every
  match (quadratic). `Encoded` maps byte offsets back to characters.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from itertools import permutations
from typing import Iterator

from rlm.redact.dense import re2_bytes
from rlm.redact.entropy import shannon

TOKEN_MIN = 20  # entropy tokens: at least this long
_WORDY = re.compile(r"(?:^|[/_~+.-])[A-Z]?[a-z]{2,11}(?:$|[/_~+.-])")
# each character's class, for counting changes of class along a token
_CLASS = str.maketrans({**{c: "u" for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"},
                        **{c: "l" for c in "abcdefghijklmnopqrstuvwxyz"},
                        **{c: "d" for c in "0123456789"}})


_BASE = rb"[A-Za-z0-9+/_~-]"  # a base64/base62 key's characters
_BASE_CLASSES = {"U": rb"[A-Z]", "L": rb"[a-z]", "D": rb"[0-9]", "S": rb"[+/_~-]"}
_RICH = rb"[A-Za-z0-9!@#$%^*()_+-]"  # a symbol-rich key's ('=' and '&' left out, or `a=b&c=d`
# query strings would read as one token)


def _holding(*needs: str) -> bytes:
    """A run of _BASE characters holding each class of `needs` (in any order)."""
    orders = sorted(set(permutations(needs)))
    alts = b"|".join(_BASE.join(_BASE_CLASSES[c] for c in o) for o in orders)
    return _BASE + b"*(?:" + alts + b")" + _BASE + b"*"


@lru_cache(maxsize=1)
def _token_rx():
    # what looks_random can accept: a base run with upper, lower and a digit, or with three
    # symbols and two digits (and its '=' padding); a symbol-rich run with three of !@#$%^*()
    # (one or two: a call in a stack trace, "(Foo.java:12)")
    return re2_bytes(b"(?:" + _holding("U", "L", "D") + b"|" + _holding("S", "S", "S", "D", "D")
                     + b")={0,2}|" + _RICH + b"*" + (rb"[!@#$%^*()]" + _RICH + b"*") * 3,
                     latin1=True)


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


_RUNS = re.compile(r"u+|l+|d+")  # runs of one character class in a token's classes
_SYMBOLS = re.compile(r"[^uld]+")


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
    alnum = _SYMBOLS.sub("", cls)
    changes = len(_RUNS.findall(alnum)) - 1 if alnum else 0  # changes of class between
    # neighbours (symbols left out)
    if changes < 0.35 * len(alnum):
        return False
    floor = 0.82 * math.log2(min(n, 64))
    if symbols >= 3 and lower + upper >= 10 and digits >= 2:
        return shannon(tok) >= floor
    least = 2 if n >= 32 else 3
    if upper < least or lower < least or digits < (1 if n >= 32 else 2):
        return False
    return shannon(tok) >= floor and not (n <= NAME_MAX and _named(tok))


NAME_MAX = 48  # characters of a name at most (a long random run holds words by chance)
# a name's parts of four letters or more: Capitalised, or lower case at its start or after a
# digit or '_' (glProgramUniformMatrix2x3fvEXT: Program, Uniform, Matrix)
_PART = re.compile(r"[A-Z][a-z]{3,}|^[a-z]{4,}|(?<=[0-9_])[a-z]{4,}")


def _named(tok: str) -> bool:
    """A name made of words, not a key: two of its parts are words of code (gitleaks'
    stopwords: program, matrix, handler, entry, ...). A C header's OpenGL names and a Python
    package's CamelCase classes passed every other test. None of 1.4 million random base62 and
    base64url keys of 20 and 32 characters that pass those tests has two such parts (tests/
    redact/test_redact_names.py draws 90,000, of up to NAME_MAX)."""
    words = _code_words()
    return sum(1 for p in _PART.findall(tok) if p.lower() in words) >= 2


@lru_cache(maxsize=1)
def _code_words() -> frozenset[str]:
    from rlm.redact.rules import rule_set

    return rule_set().words()


@lru_cache(maxsize=1)
def _long_run_rx():
    # TOKEN_MIN characters of either kind of key: every candidate that can pass lies in such a run
    least = str(TOKEN_MIN).encode()
    return re2_bytes(rb"[A-Za-z0-9+/_~!@#$%^*()-]{" + least + rb",}", latin1=True)


def candidates(data: bytes) -> Iterator[tuple[int, int]]:
    """(start, end) of the candidate runs in data that are long enough to pass (TOKEN_MIN bytes
    before their '=' padding), as the token pattern finds them left to right. A short one (an
    access log's '01/Mar/2026' and 'AppleWebKit/537', on every line) sends the search on to
    the next run of TOKEN_MIN key characters: no candidate that can pass starts between them,
    and none that starts before that run reaches into it (the byte before it is no key's). So
    RE2 is called at most twice a candidate found, and once a long one."""
    import re2

    token, run = _token_rx()._regexp, _long_run_rx()._regexp
    anchor = re2._Anchor.UNANCHORED
    pos, n = 0, len(data)
    while pos < n:
        s, e = token.Match(anchor, data, pos, n)[0]
        if s < 0:
            return
        body = e
        while body > s and data[body - 1] == 0x3D:  # '='
            body -= 1
        if body - s >= TOKEN_MIN:
            yield s, e
            pos = e
            continue
        r = run.Match(anchor, data, s, n)[0][0]
        if r < 0:
            return
        pos = max(r, e)


def entropy_hits(data: bytes, claimed: frozenset | set = frozenset()):
    """(start, end, value) in bytes of the random-looking tokens in data. claimed: (start, end)
    of secrets found already; a candidate that could only repeat one of them is not judged."""
    for start, end in candidates(data):
        raw = data[start:end]
        if claimed and (end - len(raw.lstrip(b"-_~/+")), end) in claimed:
            continue  # what _verdict would take is that very secret (its lead stripped)
        verdict = _token_verdict(raw) if len(raw) <= CACHED_MAX else _verdict(raw)
        if verdict is not None:
            yield start + verdict[0], end, verdict[1]


CACHED_MAX = 256  # bytes of a candidate whose verdict is remembered (8,192 of them: 2 MB at
# most; a base64 blob of any length is one candidate)


def _verdict(raw: bytes) -> tuple[int, str] | None:
    """(where the key starts in raw, the key) when the candidate run raw reads as a key."""
    if len(raw.translate(None, b"!@#$%^*()")) < len(raw):
        if len(raw) < 2 * TOKEN_MIN:
            return None  # a symbol-rich run: 40 characters at least
    elif len(raw.rstrip(b"=")) < TOKEN_MIN:
        return None  # a base run: 20 before its padding
    lead = len(raw) - len(raw.lstrip(b"-_~/+"))
    tok = raw[lead:].decode("ascii", "replace")
    return (lead, tok) if looks_random(tok) else None


# cached on the bytes: a log repeats its long tokens (a host name on every line), and most
# runs are settled without decoding them again
_token_verdict = lru_cache(maxsize=8192)(_verdict)
