"""Secrets and personal data in text become stable placeholders (``⟨SECRET_1⟩``, ``⟨EMAIL_3⟩``).

Detection is code: gitleaks' rule set as data (rlm.redact.rules: ~220 shaped secrets of named
services, JWTs, generic credentials), long random-looking strings by entropy (rlm.redact.scan),
and tested patterns with checksums: e-mail addresses, card numbers (Luhn and issuer prefix),
IBANs (mod-97), US social security numbers, phone numbers, IPv4/IPv6 addresses, bearer/basic
tokens, passwords in URLs, ``key=value`` credentials, AWS access key ids and private-key blocks.
For speed, one RE2 pass picks the lines that could hold any of these (rlm.redact.scan); the exact
detectors read only those.

The placeholders of one run are rlm.redact.redactor's. Nothing found is ever sent anywhere to
be verified.
"""

from __future__ import annotations

import gc
import ipaddress
import re
from bisect import bisect_right
from contextlib import contextmanager
from functools import lru_cache
from itertools import repeat
from operator import itemgetter, le
from typing import NamedTuple

from rlm.redact import dense, rare
from rlm.redact.blocks import WordSet
from rlm.redact.kinds import KIND_WORDS, KINDS, PLACEHOLDER  # noqa: F401 - read from here too
from rlm.redact.rules import rule_set
from rlm.redact.scan import Encoded, entropy_hits


# a whole key block, or the part of one that a chunk boundary left (no END, or no BEGIN: then
# the base64 lines right above the END line)
_PRIVATE_KEY_BLOCK = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(.*?)(?:-----END [A-Z0-9 ]*-----|\Z)"
    r"|((?:^[^\n]{0,12}[A-Za-z0-9+/=]{16,}[ \t]*\n)+)[^\n]{0,12}"
    r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----", re.S | re.M)
_KEY_BODY = re.compile(r"[A-Za-z0-9+/=]{16,}")
_URL_PASSWORD = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]{1,15}://[^\s:/?#@'\"]+:([^\s/?#@'\"]+)@")
_AUTH_TOKEN = re.compile(r"(?i)\b(?:bearer|basic|token)\s+([A-Za-z0-9._~+/-]{8,}=*)")
_KV_SECRET = re.compile(
    r"(?i)(?:\b|_)(?:api[_-]?key|apikey|access[_-]?token|auth[_-]?token|secret(?:[_-]?key)?|"
    r"secret[_-]?access[_-]?key|account[_-]?key|session[_-]?token|"
    r"client[_-]?secret|password|passwd|pwd|private[_-]?key)[\"']?\s*[=:]\s*[\"']?"
    r"([^\s\"'&,;<>]{6,})")
_AWS_KEY_ID = re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b")
_EMAIL = re.compile(r"(?<![\w.%+-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@"
                    r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?"
                    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*\.[A-Za-z]{2,24}(?![\w-])")
_CARD = re.compile(r"(?<![\w-])\d(?:[ -]?\d){12,18}(?![\w-])")
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b")
_PHONE = re.compile(
    r"(?<![\w+])\+\d{1,3}(?:[ .-]?\(?\d{1,4}\)?){2,5}(?![\w])"  # +44 20 7946 0958
    r"|(?<![\w(])\(\d{3}\)[ .-]?\d{3}[ .-]\d{4}(?!\w)"  # (415) 555-0134
    r"|(?<![\w.-])\d{3}[.-]\d{3}[.-]\d{4}(?![\w.-])")  # 415-555-0134
_IPV4 = re.compile(r"(?<![\w.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}"
                   r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?![\w]|\.\d)")
_IPV6 = re.compile(r"(?<![\w:])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:[0-9A-Fa-f]{1,4}|:)?(?![\w:])")
# area 000, 666 and 9xx, group 00 and serial 0000 are never issued
_SSN = re.compile(r"(?<![\w-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\w-])")


# ------------------------------------------------------------------------------------ checks

def luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def card_issuer_ok(d: str) -> bool:
    """The number has a known issuer prefix and length: epoch milliseconds and other long
    counters pass a Luhn check one time in ten, but almost never start like a card."""
    n = len(d)
    if d[0] == "4":
        return n in (13, 16, 19)
    p2, p4 = int(d[:2]), int(d[:4])
    if 51 <= p2 <= 55 or 2221 <= p4 <= 2720:
        return n == 16
    if p2 in (34, 37):
        return n == 15
    if d.startswith("6011") or p2 == 65 or 644 <= int(d[:3]) <= 649:
        return 16 <= n <= 19
    if p2 in (36, 38) or 300 <= int(d[:3]) <= 305:
        return n == 14
    if p2 == 35:
        return 16 <= n <= 19
    return False


def is_card(text: str) -> bool:
    d = re.sub(r"[ -]", "", text)
    return 13 <= len(d) <= 19 and card_issuer_ok(d) and luhn_ok(d)


def _card_ok(raw: bytes) -> bool:
    """is_card on the bytes of a candidate (most candidates in a log fail at the first digit:
    no issuer starts with 0, 1, 7, 8 or 9)."""
    return raw[:1] in (b"2", b"3", b"4", b"5", b"6") and is_card(raw.decode("ascii"))


def iban_ok(text: str) -> bool:
    s = text.replace(" ", "").upper()
    if not 15 <= len(s) <= 34:
        return False
    moved = s[4:] + s[:4]
    num = "".join(str(int(c, 36)) for c in moved)
    return int(num) % 97 == 1


def _ip_ok(text: str) -> bool:
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        return False
    return not (ip.is_loopback or ip.is_unspecified)


def _phone_ok(text: str) -> bool:
    n = sum(c.isdigit() for c in text)
    return 8 <= n <= 15


# ------------------------------------------------------------------------------------ detection

class Hit(NamedTuple):  # a tuple: a log's thousands of hits are made and sorted in C
    start: int
    end: int
    kind: str
    value: str



def detect(text: str, known=(),
           found: list[Hit] | None = None) -> list[Hit]:
    """Non-overlapping hits in text order. Earlier detectors win an overlap, so a password in a
    URL is not also read as an e-mail address, and a card number not as a phone number.
    `known`: secret values found before (in this run: its rlm.redact.recurring.Known); they
    and the secrets found here are taken wherever they recur, first (see _recurring).
    `found`: `pattern_hits(text)`, when it was computed elsewhere (a Ray worker)."""
    with collection_paused():
        hits = pattern_hits(text) if found is None else found
        return _resolve(_recurring(text, hits, known) + hits)


@contextmanager
def collection_paused():
    """Python's cyclic garbage collector held off while a text's hits are made: they are tuples,
    tens of thousands in an address-dense log, and every 700 new ones start a collection that
    also walks older objects (on an sshd log of two addresses a line, detect took 1.37x the
    time with it on). Tuples of numbers and strings make no cycles; the collector runs again
    at the end, unless someone else had turned it off."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _recurring(text: str, hits: list[Hit], known) -> list[Hit]:
    """Every occurrence of each secret value, longest first: a password seen once in context
    (`password=X`, `Bearer X`, `://u:X@`) recurs where no pattern sees it (a list of search
    terms, a quote), and a pattern may see only part of a token seen whole before. `known`: a
    run's rlm.redact.recurring.Known (its secrets in a suffix index), or values."""
    from rlm.redact.recurring import Known

    if not isinstance(known, Known):
        known = Known(known, compiled=False)  # a few values: str.find each
    return known.recurring(text, hits, Hit)


def pattern_hits(text: str) -> list[Hit]:
    """Private-key blocks (they span lines) over the text; every other detector over its UTF-8
    bytes (rlm.redact.dense: RE2, linear), in priority order as _resolve reads it, then mapped
    back to characters. The costly part of `detect`, and a function of the text alone (no run
    state): a Ray worker can compute it for the driver's Redactor."""
    hits: list[Hit] = []
    for m in (private_key_blocks(text) if "PRIVATE KEY" in text else ()):
        g = 1 if m.group(1) is not None else 2
        body = m.group(g)
        value = "".join(_KEY_BODY.findall(body))
        if value:
            hits.extend(Hit(m.start(g) + b.start(), m.start(g) + b.end(), "SECRET", value)
                        for b in _KEY_BODY.finditer(body))
    enc = Encoded(text)
    found = _to_chars(enc, _byte_hits(enc.data))
    if not hits:
        return found
    # a key block's lines are one value: its lines' own hits (entropy) would split it
    return hits + [h for h in found
                   if not any(k.start < h.end and h.start < k.end for k in hits)]


_KEY_LINE = re.compile(r"[^\n]{0,12}[A-Za-z0-9+/=]{16,}[ \t]*\n")  # one line of a key's body


def private_key_blocks(text: str):
    """What _PRIVATE_KEY_BLOCK.finditer(text) finds, the pattern tried only where a match can
    start: at each '-----BEGIN ', and at each line of the run of key lines right above an
    '-----END ' (the pattern's second branch starts with `^` under re.M, so finditer tried it
    at every position of the text: 30 MB/s over source code that names PRIVATE KEY)."""
    starts = set(_occurrences(text, "-----BEGIN "))
    for i in _occurrences(text, "-----END "):
        line = text.rfind("\n", 0, i) + 1
        while line > 0:  # the key lines above, each a start the second branch can take
            up = text.rfind("\n", 0, line - 1) + 1
            if _KEY_LINE.match(text, up) is None:
                break
            starts.add(up)
            line = up
    pos = 0
    for at in sorted(starts):
        if at >= pos and (m := _PRIVATE_KEY_BLOCK.match(text, at)) is not None:
            yield m
            pos = m.end()


def _occurrences(text: str, word: str):
    i = text.find(word)
    while i >= 0:
        yield i
        i = text.find(word, i + 1)


@lru_cache(maxsize=1)
def _words() -> WordSet:
    """gitleaks' keywords and '@' (e-mail addresses), and the presence patterns of the rules
    whose keywords are common words, one Set (rlm.redact.blocks)."""
    return WordSet([*rule_set().keywords(), b"@"], patterns=rule_set().presences())


def _byte_hits(data: bytes, segments: list[tuple[int, int]] | None = None
               ) -> list[tuple[int, int, str]]:
    """(start, end, kind) in bytes, in priority order. segments: the byte ranges of the texts
    joined into data (rlm.redact.batch), for what reads a text by blocks."""
    where = _words().where(data, segments)
    shaped = rare.shape_lines(data)
    nl = b"\n" + data  # the dense patterns consume the byte before a value
    out: list[tuple[int, int, str]] = []

    def add(kind: str, spans, shift: int = 0, check=None) -> None:
        for s, e in spans:
            if check is None or check(data[s - shift:e - shift]):
                out.append((s - shift, e - shift, kind))

    def rare_hits(name: str, pattern, group: int):
        return rare.hits(pattern, data, shaped.get(name, ()), group)

    for name, pattern, kind, group, check in _RARE[:4]:
        add(kind, rare_hits(name, pattern, group), check=check)
    # what only repeats a secret found already is not judged again: on a log with a token on
    # every line, the key=value, gitleaks' generic rule and the entropy test each found it
    claimed = {(s, e) for s, e, _ in out}  # all SECRET so far
    for f in rule_set().find(where, claimed):
        out.append((f.start, f.end, "SECRET"))
        claimed.add((f.start, f.end))
    add("SECRET", ((a, b) for a, b, _ in entropy_hits(data, claimed)))
    for a, b in where.windows([b"@"], margin=0):
        add("EMAIL", dense.with_fallback("email", nl, _EMAIL, True, a, b + 1), 1)
    for a, b in shaped.get("card", ()):  # nl[a] is the byte before the line
        add("CARD", dense.with_fallback("card", nl, _CARD, True, a, b + 1), 1, _card_ok)
    for name, pattern, kind, group, check in _RARE[4:]:
        add(kind, rare_hits(name, pattern, group), check=check)
    dense.ipv4(nl, out)
    for a, b in shaped.get("ipv6", ()):
        add("IP", dense.ipv6(data, _ipv6_ok, a, b))
    return out


def _text_check(check):
    return lambda raw: check(raw.decode("utf-8", "replace"))


def _to_chars(enc: Encoded, found) -> list[Hit]:
    if not found:
        return []
    if enc.ascii:  # tuples made in C, not one Python call per hit: thousands a log
        starts, ends, kinds = zip(*found)
        values = map(enc.text.__getitem__, map(slice, starts, ends))
        return list(map(tuple.__new__, repeat(Hit), zip(starts, ends, kinds, values)))
    where = {off: 0 for s, e, _ in found for off in (s, e)}
    for off in sorted(where):  # Encoded.char is incremental in increasing order
        where[off] = enc.char(off)
    return [Hit(where[s], where[e], kind, enc.data[s:e].decode("utf-8", "replace"))
            for s, e, kind in found]


def _auth_ok(v: bytes) -> bool:
    return len(v) >= 24 or _DIGIT.search(v) is not None  # (a Python step a byte was 2 us a JWT)


_DIGIT = re.compile(rb"[0-9]")


def _no_placeholder(v: bytes) -> bool:
    return "⟨".encode() not in v or not PLACEHOLDER.search(v.decode("utf-8", "replace"))


# what a key=value's key can say, less its separators (see _KV_SECRET)
_KEY_WORDS = frozenset(b"apikey accesstoken authtoken secret secretkey secretaccesskey accountkey "
                       b"sessiontoken clientsecret password passwd pwd privatekey token pass auth "
                       b"key credential credentials".split())
_KEY_PARTS = (b"pass", b"pwd", b"secret", b"token", b"key", b"auth", b"credential")
_REFERENCE = re.compile(rb"(?:[A-Za-z_$][A-Za-z_$]*\.)*([A-Za-z_$][A-Za-z_$-]*)[)\]}:]*")
# (what closes the code around it: `f(password=password):`, `{password: creds.password}`)


def _literal(v: bytes) -> bool:
    """The value is neither a key word itself nor a dotted reference to one: code's
    `password = password`, `password: creds.password`, `pwd=self.pwd`, a documentation URL's
    `https://user:password@host`. Read as a secret, such a value was then taken wherever the
    word recurs (rlm.redact.recurring): all through the code, and in the user's own question
    ("how are ⟨SECRET_1⟩s stored?"). A real secret has a digit, or is no key word."""
    m = _REFERENCE.fullmatch(v)
    if m is None:
        return True
    last = m.group(1).lower().replace(b"_", b"").replace(b"-", b"")
    return not (last in _KEY_WORDS or (b"." in v and any(w in last for w in _KEY_PARTS)))


def _kv_ok(v: bytes) -> bool:
    return _no_placeholder(v) and _literal(v)


def _ipv6_ok(v: str) -> bool:
    return v.count(":") >= 2 and _ip_ok(v)


# (shape in rlm.redact.rare, pattern, kind, group, check of the value's bytes), in priority
# order; gitleaks' rules, the entropy tokens, e-mail addresses and cards come between the
# first four and the rest, IP addresses last
_RARE = (
    ("url", _URL_PASSWORD, "SECRET", 1, _literal),
    ("auth", _AUTH_TOKEN, "SECRET", 1, _auth_ok),
    ("kv", _KV_SECRET, "SECRET", 1, _kv_ok),
    ("aws", _AWS_KEY_ID, "SECRET", 0, None),
    ("iban", _IBAN, "IBAN", 0, _text_check(iban_ok)),
    ("ssn", _SSN, "SSN", 0, None),
    ("phone", _PHONE, "PHONE", 0, _text_check(_phone_ok)),
)


def _resolve(hits: list[Hit]) -> list[Hit]:
    """Priority order: the first detector to claim a span keeps it. Hits that overlap no other
    are kept as they are; only a group of overlapping ones is resolved by priority. A hit
    given twice (a secret's own place, found again as a recurring value) is one: the first."""
    ordered = sorted(hits)
    starts, ends = list(map(itemgetter(0), ordered)), list(map(itemgetter(1), ordered))
    if all(map(le, ends[:-1], starts[1:])):  # nothing overlaps (the common case): in C
        return ordered
    if len(unique := list(dict.fromkeys(hits))) < len(hits):  # then maybe nothing else does
        return _resolve(unique)
    taken: list[Hit] = []
    group: list[int] = []
    reach = -1
    for i in sorted(range(len(hits)), key=hits.__getitem__):  # by start, then end
        start, end = hits[i][0], hits[i][1]
        if start >= reach and group:
            if len(group) == 1:
                taken.append(hits[group[0]])
            else:
                taken.extend(_by_priority([hits[j] for j in sorted(group)]))
            group = []
        group.append(i)
        reach = end if len(group) == 1 else max(reach, end)
    if group:
        taken.extend(_by_priority([hits[j] for j in sorted(group)]))
    return sorted(taken)


def _by_priority(hits: list[Hit]) -> list[Hit]:
    """The first to claim a span keeps it (hits in priority order). The claimed spans are kept
    sorted and disjoint, so each check looks at two neighbours."""
    if len(hits) == 1:
        return hits
    taken: list[Hit] = []
    starts: list[int] = []
    ends: list[int] = []
    for h in hits:
        i = bisect_right(starts, h.start)
        if (i and ends[i - 1] > h.start) or (i < len(starts) and starts[i] < h.end):
            continue
        starts.insert(i, h.start)
        ends.insert(i, h.end)
        taken.append(h)
    return taken
