"""Secrets and personal data in text become stable placeholders (``⟨SECRET_1⟩``, ``⟨EMAIL_3⟩``).

Detection is code: detect-secrets' own plugins (cloud keys, tokens of well-known services,
private-key headers, JWTs, keyword assignments and quoted high-entropy strings), plus tested
patterns for what it does not cover: e-mail addresses, card numbers (Luhn and issuer prefix),
IBANs (mod-97), phone numbers, IPv4/IPv6 addresses, bearer/basic tokens, passwords in URLs,
``key=value`` credentials, AWS access key ids and whole private-key blocks.

One ``Redactor`` lives for one run: the same value gets the same placeholder in every call, so a
model can still correlate ("⟨EMAIL_3⟩ failed to log in twice"), and ``restore`` maps a model's
reply back to the original values for local use. detect-secrets is used only through its
plugins' ``analyze_string`` (pure regex work): its optional verification, which would send a
found secret to the service that issued it, is never called.
"""

from __future__ import annotations

import ipaddress
import re
import threading
from dataclasses import dataclass
from functools import lru_cache

KINDS = ("SECRET", "EMAIL", "CARD", "IBAN", "PHONE", "IP")
KIND_WORDS = {"SECRET": "secrets", "EMAIL": "e-mails", "CARD": "card numbers", "IBAN": "IBANs",
              "PHONE": "phone numbers", "IP": "IP addresses"}
PLACEHOLDER = re.compile(r"⟨(SECRET|EMAIL|CARD|IBAN|PHONE|IP)_(\d+)⟩")

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
# detect-secrets' own IP plugin is replaced by the IPv4/IPv6 patterns above (they also keep
# private ranges, which name internal hosts)
_SKIP_PLUGINS = {"IPPublicDetector", "PrivateKeyDetector"}  # the block pattern covers keys
_ENTROPY_LIMITS = {"Base64HighEntropyString": 4.5, "HexHighEntropyString": 3.0}


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

@dataclass(frozen=True)
class Hit:
    start: int
    end: int
    kind: str
    value: str


@lru_cache(maxsize=1)
def _plugins() -> tuple:
    """detect-secrets' plugins, built once, without its global settings (no verification)."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    out = []
    for cls in get_mapping_from_secret_type_to_class().values():
        if cls.__name__ in _SKIP_PLUGINS:
            continue
        try:
            out.append(cls())
        except TypeError:  # a plugin that needs configuration we do not have
            continue
    return tuple(out)


_KEYWORD_HINT = re.compile(r"(?i)key|pw|pass|token|secret|contras|cloudant|softlayer")
# plugins whose every pattern needs one of the hint words: they read only the lines that have
# one (five times faster on logs; a pattern's "^" then means a line start, as in a file scan)
_KEYWORD_PLUGINS = {"KeywordDetector", "CloudantDetector", "IbmCloudIamDetector",
                    "IbmCosHmacDetector", "SoftlayerDetector"}


def _plugin_matches(plugin, text: str):
    """A regex plugin's matches. Its own analyze_string uses findall, which gives only the first
    group of a pattern with groups ('ghp' of a GitHub token): take the longest group instead, or
    the whole match when the groups are only a prefix."""
    denylist = getattr(plugin, "denylist", None)
    if not denylist or type(plugin).__name__ == "KeywordDetector":
        yield from plugin.analyze_string(text)
        return
    for rx in denylist:
        for m in rx.finditer(text):
            groups = [g for g in m.groups() if g]
            best = max(groups, key=len) if groups else ""
            yield best if len(best) >= 8 else m.group(0)


def _secret_plugin_values(text: str) -> list[str]:
    """Values detect-secrets' plugins find. Their patterns do not span lines, so they run over
    the whole text at once, except the keyword-anchored ones (see _KEYWORD_PLUGINS)."""
    vals: list[str] = []
    hinted = [ln for ln in text.split("\n") if _KEYWORD_HINT.search(ln)]
    for plugin in _plugins():
        limit = _ENTROPY_LIMITS.get(type(plugin).__name__)
        name = type(plugin).__name__
        if name == "KeywordDetector":  # it reports one match per call: line by line
            parts = hinted
        elif name in _KEYWORD_PLUGINS:
            parts = ["\n".join(hinted)] if hinted else []
        else:
            parts = [text]
        try:
            for part in parts:
                for v in _plugin_matches(plugin, part):
                    if not isinstance(v, str) or len(v) < 6 or "\n" in v:
                        continue
                    if limit is not None and plugin.calculate_shannon_entropy(v) <= limit:
                        continue
                    vals.append(v)
        except Exception:  # noqa: BLE001 - a plugin bug must not stop a run; the patterns remain
            continue
    return vals


def _spans(pattern: re.Pattern, text: str, kind: str, group: int = 0, check=None):
    for m in pattern.finditer(text):
        v = m.group(group)
        if v and (check is None or check(v)):
            yield Hit(m.start(group), m.end(group), kind, v)


def detect(text: str, known: tuple[str, ...] | list[str] = ()) -> list[Hit]:
    """Non-overlapping hits in text order. Earlier detectors win an overlap, so a password in a
    URL is not also read as an e-mail address, and a card number not as a phone number.
    `known`: secret values found before (in this run); they and the secrets found here are
    taken wherever they recur, first (see _recurring)."""
    hits = _pattern_hits(text)
    return _resolve(_recurring(text, hits, known) + hits)


def _recurring(text: str, hits: list[Hit], known) -> list[Hit]:
    """Every occurrence of each secret value, longest first: a password seen once in context
    (`password=X`, `Bearer X`, `://u:X@`) recurs where no pattern sees it (a list of search
    terms, a quote), and a pattern may see only part of a token seen whole before."""
    vals = dict.fromkeys(v for v in known if len(v) >= 6)
    vals.update(dict.fromkeys(h.value for h in hits if h.kind == "SECRET" and len(h.value) >= 6))
    out: list[Hit] = []
    for v in sorted(vals, key=len, reverse=True):
        i = text.find(v)
        while i >= 0:
            out.append(Hit(i, i + len(v), "SECRET", v))
            i = text.find(v, i + len(v))
    return out


def _pattern_hits(text: str) -> list[Hit]:
    hits: list[Hit] = []
    for m in (_PRIVATE_KEY_BLOCK.finditer(text) if "PRIVATE KEY" in text else ()):
        g = 1 if m.group(1) is not None else 2
        body = m.group(g)
        value = "".join(_KEY_BODY.findall(body))
        if value:
            hits.extend(Hit(m.start(g) + b.start(), m.start(g) + b.end(), "SECRET", value)
                        for b in _KEY_BODY.finditer(body))
    if "://" in text:
        hits += _spans(_URL_PASSWORD, text, "SECRET", 1)
    hits += _spans(_AUTH_TOKEN, text, "SECRET", 1,
                   lambda v: any(c.isdigit() for c in v) or len(v) >= 24)
    hits += _spans(_KV_SECRET, text, "SECRET", 1, lambda v: not PLACEHOLDER.search(v))
    hits += _spans(_AWS_KEY_ID, text, "SECRET")
    for v in dict.fromkeys(_secret_plugin_values(text)):
        i = text.find(v)
        while i >= 0:
            hits.append(Hit(i, i + len(v), "SECRET", v))
            i = text.find(v, i + len(v))
    if "@" in text:
        hits += _spans(_EMAIL, text, "EMAIL")
    hits += _spans(_CARD, text, "CARD", check=is_card)
    hits += _spans(_IBAN, text, "IBAN", check=iban_ok)
    hits += _spans(_PHONE, text, "PHONE", check=_phone_ok)
    hits += _spans(_IPV4, text, "IP", check=_ip_ok)
    hits += _spans(_IPV6, text, "IP", check=lambda v: v.count(":") >= 2 and _ip_ok(v))
    return hits


def _resolve(hits: list[Hit]) -> list[Hit]:
    taken: list[Hit] = []
    occupied: list[tuple[int, int]] = []
    for h in hits:  # priority order: the first detector to claim a span keeps it
        if any(h.start < b and a < h.end for a, b in occupied):
            continue
        occupied.append((h.start, h.end))
        taken.append(h)
    return sorted(taken, key=lambda h: h.start)


# ------------------------------------------------------------------------------------ redactor

class Redactor:
    """Placeholders of one run, counts per kind, and the way back for local display."""

    def __init__(self) -> None:
        self._by_value: dict[tuple[str, str], str] = {}
        self._by_placeholder: dict[str, str] = {}
        self._counters = {k: 0 for k in KINDS}
        self._touched: set[int] = set()  # hashes of the prompts (first user message) with a hit
        self._secrets: list[str] = []  # SECRET values so far: masked wherever they recur
        self._lock = threading.Lock()

    def placeholder(self, kind: str, value: str) -> str:
        key = (kind, value)  # exact: restore() must give back the very text, for quote checks
        with self._lock:
            ph = self._by_value.get(key)
            if ph is None:
                self._counters[kind] += 1
                ph = f"⟨{kind}_{self._counters[kind]}⟩"
                self._by_value[key] = ph
                self._by_placeholder[ph] = value
                if kind == "SECRET":
                    self._secrets.append(value)
            return ph

    def redact(self, text: str, count_prompt: bool = False) -> str:
        """text with every detected value replaced by its placeholder."""
        if not text:
            return text
        hits = detect(text, tuple(self._secrets))
        if not hits:
            return text
        out, pos = [], 0
        for h in hits:  # a private key's body lines all show the one placeholder of the key
            out.append(text[pos:h.start])
            out.append(self.placeholder(h.kind, h.value))
            pos = h.end
        out.append(text[pos:])
        if count_prompt:
            with self._lock:
                self._touched.add(hash(text))
        return "".join(out)

    def restore(self, text: str) -> str:
        """A model's reply with the placeholders it repeated mapped back to the originals."""
        if not text or "⟨" not in text:
            return text
        return PLACEHOLDER.sub(lambda m: self._by_placeholder.get(m.group(0), m.group(0)), text)

    def restore_data(self, data):
        if isinstance(data, str):
            return self.restore(data)
        if isinstance(data, list):
            return [self.restore_data(x) for x in data]
        if isinstance(data, dict):
            return {k: self.restore_data(v) for k, v in data.items()}
        return data

    def mask_data(self, data):
        """Every string in a JSON-like structure redacted (for --redact-report)."""
        if isinstance(data, str):
            return self.redact(data)
        if isinstance(data, list):
            return [self.mask_data(x) for x in data]
        if isinstance(data, dict):
            return {k: self.mask_data(v) for k, v in data.items()}
        return data

    # -- counts
    def counts(self) -> dict[str, int]:
        with self._lock:
            return {k: n for k, n in self._counters.items() if n}

    @property
    def values(self) -> int:
        return sum(self.counts().values())

    @property
    def prompts(self) -> int:
        return len(self._touched)

    def statement(self) -> str:
        """e.g. '37 values in 12 prompts were redacted before leaving this machine (secrets 21,
        e-mails 16)'; empty when nothing was found. Prompts, not chunks: a value can also be in
        a merge or synthesis prompt, and a retry of the same prompt counts once."""
        c = self.counts()
        if not c:
            return ""
        n, k = self.values, self.prompts
        kinds = ", ".join(f"{KIND_WORDS[x]} {c[x]}" for x in KINDS if x in c)
        return (f"{n} value{'s' if n != 1 else ''} in {k} prompt{'s' if k != 1 else ''} "
                f"{'were' if n != 1 else 'was'} redacted before leaving this machine ({kinds})")
