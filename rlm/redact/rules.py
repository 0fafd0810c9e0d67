"""gitleaks' rule set, run as data: about 220 shaped secrets (cloud keys, service tokens, JWTs,
private keys, generic `key = value` credentials), each with keyword prefilters, an entropy floor
and allowlists. The file is gitleaks' own default config (recipes/gitleaks.toml, MIT, its licence
beside it in recipes/gitleaks.LICENSE): update it by copying a newer one.

How it runs (gitleaks' own semantics, Go regexes on RE2, the same engine as Go's `regexp`):
1. one RE2 Set pass per 4 KB block of the lower-cased text finds which keywords each block
   holds (rlm.redact.blocks);
2. each rule's regex runs over the blocks that hold its keywords, and one block either side
   (gitleaks reads the whole file when a keyword is anywhere in it; a match may run into the
   next block), a linear-time RE2 scan (its lines alone cost more: Python finds them);
3. the secret is the rule's `secretGroup`, else the first non-empty group, else the match;
   it must beat the rule's entropy floor (and hold a digit, for the generic rules), and pass
   the rule's and the global allowlists (regexes on the secret, match or line; stopwords).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import lru_cache, partial
from importlib import resources
from typing import Iterator

from rlm.redact.dense import found, matches, re2_options
from rlm.redact.entropy import shannon

MIN_SECRET = 8  # shorter "secrets" are ids and words, whatever a rule says


@dataclass(frozen=True)
class Allow:
    regexes: tuple
    target: str  # secret | match | line
    stopwords: tuple[str, ...]
    needs_path: bool  # an AND with paths: rlm has no file path here, so it never applies
    stop: object = None  # the stopwords as one RE2 alternation: generic-api-key has 1,446,
    # and `any(w in value ...)` over them took 0.3 ms a candidate (an access log with a token
    # on every line: 1.4 s of 2.2)


@dataclass(frozen=True)
class Rule:
    id: str
    rx: object
    keywords: tuple[str, ...]
    entropy: float
    group: int
    allows: tuple[Allow, ...]
    probe: object = None  # the regex less a leading `(?i)[\w.-]{0,50}?`: no match of it in a
    # window, no match of the rule (gitleaks' generic rules: its DFA is ~3x faster)
    presence: bytes | None = None  # what every match holds, found with the keywords
    # (rlm.redact.blocks): for the rules whose keywords are common words (COMMON)


@dataclass(frozen=True)
class Found:
    start: int
    end: int
    value: str
    rule: str


def _re2_options():
    return re2_options(max_mem=32 << 20)


def _allow(spec: dict, opts) -> Allow:
    import re2

    singles = {}
    for r in spec.get("regexes", []):
        try:
            singles[r] = re2.compile(r, opts)
        except re2.error:
            continue
    try:  # one search for all of them (a log's every key=value line is a candidate)
        rxs = [re2.compile("|".join(f"(?:{r})" for r in singles), opts)] if singles else []
    except re2.error:
        rxs = list(singles.values())
    words = tuple(w.lower() for w in spec.get("stopwords", []))
    stop = re2.compile("|".join(map(re2.escape, words)), opts) if words else None
    return Allow(tuple(rxs), spec.get("regexTarget", "secret"), words,
                 spec.get("condition", "OR").upper() == "AND" and bool(spec.get("paths")), stop)


@lru_cache(maxsize=1)
def rule_set() -> "RuleSet":
    """The rules of recipes/gitleaks.toml, compiled once per process."""
    import re2

    data = tomllib.loads(resources.files("rlm.recipes").joinpath("gitleaks.toml")
                         .read_text("utf-8"))
    opts = _re2_options()
    rules = []
    for r in data.get("rules", []):
        if "regex" not in r or (r.get("path") and not r.get("keywords")):
            continue  # a rule on file names only (pkcs12-file): nothing to find in text
        try:
            rx = re2.compile(r["regex"], opts)
        except re2.error:
            continue
        probe = _probe(r["regex"], opts)
        rules.append(Rule(r["id"], rx, tuple(k.lower() for k in r.get("keywords", [])),
                          float(r.get("entropy", 0.0)), int(r.get("secretGroup", 0)),
                          tuple(_allow(a, opts) for a in r.get("allowlists", [])), probe,
                          presence(r["regex"], probe is not None) if r["id"] in COMMON
                          else None))
    return RuleSet(rules, _allow(data.get("allowlist", {}), opts))


_LEAD = "(?i)[\\w.-]{0,50}?"  # how 96 of gitleaks' rules start: it only moves a match's start


def _probe(regex: str, opts):
    """A faster regex that matches wherever `regex` does (see Rule.probe), or None."""
    import re2

    if not regex.startswith(_LEAD):
        return None
    try:
        return re2.compile("(?i)" + regex[len(_LEAD):], opts)
    except re2.error:
        return None


# The rules whose keywords are common words: over real logs, prose and code their keyword windows
# cover 5-100% of the text (generic-api-key: 42% of LogHub, all of a transcript; vault's "s." and
# jwt's "ey" are in most blocks of any text; measured with evals/bench_redact's texts and the
# installed packages' source), so their regexes read most of a text. Each has a presence
# pattern that every match of it holds, found in the keywords' pass: it reads only the blocks
# where that is. Other rules' keywords are rare enough (a service's name) to be the filter.
COMMON = ("generic-api-key", "hashicorp-tf-password", "jwt", "vault-service-token",
          "lob-api-key")
_OPERATOR = r"(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)"  # how gitleaks' generic rules assign a value


def presence(regex: str, led: bool) -> bytes | None:
    """What every match of a rule holds, for Hyperscan: a led rule's probe up to its assignment
    operator (a prefix of a concatenation, so any match of the probe starts with a match of it:
    the keyword, a few word characters, quotes or spaces, the operator), else the regex itself;
    None where the probe is not such a concatenation."""
    if not led:
        return regex.encode()
    body = regex[len(_LEAD):]
    cut = body.find(_OPERATOR) + len(_OPERATOR)
    if cut < len(_OPERATOR) or body[cut:cut + 1] in ("?", "*", "+", "{") \
            or not _one_branch(body) or not _one_branch(body[:cut]):  # cut inside a group
        return None
    return ("(?i)" + body[:cut]).encode()


def _one_branch(regex: str) -> bool:
    """The regex has no '|' outside parentheses and its parentheses balance (then a prefix
    ending outside parentheses is one piece of a concatenation)."""
    depth, i, n = 0, 0, len(regex)
    while i < n:
        c = regex[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":  # a class: up to its closing ']' (one right after '[' or '[^' is literal)
            i += 2 if regex.startswith("[^", i) else 1
            i += 1 if i < n and regex[i] == "]" else 0
            while i < n and regex[i] != "]":
                i += 2 if regex[i] == "\\" else 1
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            return False
        i += 1
    return depth == 0


def led_matches(rule: Rule, data: bytes, a: int, b: int):
    r"""What `matches(rule.rx, data, a, b)` gives for a rule that has a probe, found from its
    probe's matches. Such a match is its lead (at most 50 bytes of `[\w.-]`) and then the
    probe's leftmost match from where the search stands (any other start would need a probe
    match further left), so the rule is matched from 50 bytes before each probe match: its
    lead's DFA is what costs (generic-api-key on LogHub: 6.5 ms over its keyword windows,
    its probe 2 ms)."""
    import re2

    probe, full, anchor = rule.probe._regexp, rule.rx._regexp, re2._Anchor.UNANCHORED
    pos = a
    while pos <= b:
        s = probe.Match(anchor, data, pos, b)[0][0]
        if s < 0:
            return
        groups = full.Match(anchor, data, max(pos, s - LEAD_MAX), b)
        start, end = groups[0]
        if start < 0:  # cannot be: the rule matches wherever its probe does
            return
        yield groups
        pos = end if end > start else start + 1


LEAD_MAX = 50  # bytes of _LEAD at most ([\w.-] is ASCII in RE2)


def _presence_name(rule: Rule) -> str:
    return f"rule:{rule.id}"


class _Match:
    """The groups of one RE2 match, as the spans RE2's own Match gives them (the wrapper's
    finditer costs ~5 us a call in Python, and a prompt looks at a few dozen rules)."""

    __slots__ = ("data", "spans")

    def __init__(self, data: bytes, spans):
        self.data, self.spans = data, spans

    def groups(self) -> tuple:
        return tuple(self.group(i) for i in range(1, len(self.spans)))

    def group(self, i: int = 0):
        s, e = self.spans[i]
        return None if s < 0 else self.data[s:e]

    def start(self, i: int = 0) -> int:
        return self.spans[i][0]

    def end(self, i: int = 0) -> int:
        return self.spans[i][1]


class RuleSet:
    def __init__(self, rules: list[Rule], global_allow: Allow):
        self.rules = rules
        self.global_allow = global_allow
        self._by_keyword: dict[bytes, list[int]] = {}
        self._keyword_bytes = [tuple(k.encode("utf-8") for k in r.keywords) for r in rules]
        for i, words in enumerate(self._keyword_bytes):
            for k in words:
                self._by_keyword.setdefault(k, []).append(i)
        self._keywordless = any(not r.keywords for r in rules)  # gitleaks' has none today

    def words(self) -> frozenset[str]:
        """The allowlists' stopwords that are words (letters only): the words of code's names
        (program, matrix, handler, ...), read by rlm.redact.scan.looks_random."""
        return frozenset(w for a in (self.global_allow, *(x for r in self.rules for x in r.allows))
                         for w in a.stopwords if w.isalpha())

    def keywords(self) -> list[bytes]:
        return list(self._by_keyword)

    def presences(self) -> list[tuple[str, bytes]]:
        """(name, pattern) of each rule's presence pattern (rlm.redact.blocks)."""
        return [(_presence_name(r), r.presence) for r in self.rules if r.presence is not None]

    def find(self, where, claimed: frozenset | set = frozenset()) -> Iterator[Found]:
        """Secrets the rules find in where.data (UTF-8 bytes; offsets in bytes), each rule over
        the blocks that hold its keywords (where: an rlm.redact.blocks.Presence that knows
        them), rule by rule (not in data order). Only the rules with a keyword present are
        looked at: a prompt of a few lines holds a handful of the ~300 keywords. claimed:
        (start, end) of secrets found already; a match whose secret is exactly one of them
        is not judged again (it could only repeat that hit)."""
        data = where.data
        whole = where.segments or [(0, len(data))]
        own: dict[int, bytes] = {}  # joined texts: the bytes of each read
        present = where.present()
        due = {i for k in present for i in self._by_keyword.get(k, ())}
        for i in (range(len(self.rules)) if self._keywordless else sorted(due)):
            rule = self.rules[i]
            if not rule.keywords:
                spans = whole
            elif i not in due:
                continue
            elif rule.presence is not None and where.words.knows(_presence_name(rule)):
                spans = where.windows([_presence_name(rule)])  # [] where it is nowhere
            else:
                spans = where.windows(self._keyword_bytes[i])
            for a, b in spans:
                # joined texts (rlm.redact.batch): each is read alone, as its own bytes, so that
                # `^`, `$` and `\b` at its edges mean what they mean for the text alone
                s, e = where.text_at(a)
                text = data if (s, e) == (0, len(data)) else own.get(s) or own.setdefault(
                    s, data[s:e])
                got = matches(rule.rx, text, a - s, b - s) if rule.probe is None else \
                    led_matches(rule, text, a - s, b - s)
                for m in map(partial(_Match, text), got):
                    hit = self._secret(rule, m, text, claimed, s)
                    if hit is not None:
                        yield hit if not s else Found(hit.start + s, hit.end + s, hit.value,
                                                      hit.rule)

    def _secret(self, rule: Rule, m, data: bytes, claimed=frozenset(),
                shift: int = 0) -> Found | None:
        n = len(m.spans) - 1  # its groups (m.groups() would slice each of them out)
        g = rule.group
        if g == 0 and n:
            g = next((i for i in range(1, n + 1) if m.group(i)), 0)
        if claimed and g <= n and (m.start(g) + shift, m.end(g) + shift) in claimed:
            return None  # a key=value found it: on a log with a token a line, ~25 us a line
        raw = m.group(g) if g <= n else None
        value = raw.decode("utf-8", "replace") if raw else ""
        if not value or len(value) < MIN_SECRET or "\n" in value:
            return None
        if rule.entropy and shannon(value) <= rule.entropy:
            return None
        if rule.id.startswith("generic") and not any(map(str.isdigit, value)):
            return None
        if self._allowed(rule, value, m, data):
            return None
        return Found(m.start(g), m.end(g), value, rule.id)

    def _allowed(self, rule: Rule, value: str, m, data: bytes) -> bool:
        low = value.lower()
        for a in (self.global_allow, *rule.allows):  # the global stopwords are not read: they
            # are two sample strings (an alphabet) that a real key may well contain
            if a.needs_path:
                continue
            if a.stop is not None and a is not self.global_allow and a.stop.search(low):
                return True
            if a.regexes:
                # as bytes, through RE2's own Match: the wrapper's str search costs ~5 us a
                # call, and a log with a key=value on every line has a candidate a line
                if a.target == "secret":
                    target = value.encode("utf-8", "replace")
                elif a.target == "line":
                    a0 = data.rfind(b"\n", 0, m.start()) + 1
                    b0 = data.find(b"\n", m.end())
                    target = data[a0:b0 if b0 >= 0 else len(data)]
                else:
                    target = data[m.start():m.end()]
                if any(found(rx, target) for rx in a.regexes):
                    return True
        return False

