"""Does a picked line support the claim a model wrote about it?

In a pick, code quotes the line, so the quote is always real; the claim is the model's words.
A claim is ``verified`` only when its distinctive content is on the cited line: code splits the
claim into terms (quoted strings, identifiers, numbers, content words), weights each by how rare
it is in the repository (a word on every line proves nothing) and asks that most of the weight
be present on the line. Code cannot judge meaning; this is the least a supporting line has. A
claim that fails is kept as not verified, never dropped and never counted as a fact.
"""

from __future__ import annotations

import math
import re
import weakref
from collections import Counter
from dataclasses import dataclass, field

from rlm.repo.candidates import STOPWORDS

_TERM = re.compile(r'"([^"\n]{1,80})"|\'([^\'\n]{2,80})\'|`([^`\n]{1,80})`'
                   r"|(\d+(?:\.\d+)?)|([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)")
_PART = re.compile(r"[A-Za-z]+|\d+")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_HARD = 2.0  # quoted strings, identifiers and numbers weigh more than plain words
# A claim's share of weight on the line plus the line's share mentioned by the claim. Measured on
# the simulated repository readers (evals/sim_repo.py): true picks 0.77-2.0; invented claims on
# other candidate lines at most 0.26 once the number rule has turned away the ones with figures.
MIN_SUPPORT = 0.5
_CONSTANT = re.compile(r"^\s*([A-Z][A-Z0-9_]*[A-Z0-9])\s*(?::[^=]*)?=\s*(.+)$")
_EXTRA_STOP = frozenset("""line lines code value values set sets sets file files function
returns return true false none""".split())


@dataclass
class Support:
    """The verdict, with what was found and what was missing (for the report's note)."""

    ok: bool
    share: float  # the claim's weighted share that is on the line
    line_share: float = 0.0  # the line's weighted share that the claim mentions
    numbers_ok: bool = True  # no number in the claim, or one is on the line (rule 1)
    present: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    def reason(self) -> str:
        miss = ", ".join(self.missing[:5]) or "-"
        if not self.numbers_ok:
            return (f"the picked line does not support the claim: none of its numbers is on the "
                    f"line or given by a constant it uses together with other content of the "
                    f"line (missing: {miss}); not verified")
        return (f"the picked line does not support the claim: {self.share:.0%} of its "
                f"distinctive content is on the line and the claim mentions "
                f"{self.line_share:.0%} of the line's (missing: {miss}); not verified")


def stem(w: str) -> str:
    """A crude English stem, the same on both sides: invoices/invoice, truncated/truncates."""
    w = w.lower()
    if len(w) > 5 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 5 and w.endswith("ing"):
        w = w[:-3]
    elif len(w) > 4 and w.endswith("ed"):
        w = w[:-2]
    elif len(w) > 4 and w.endswith(("ses", "xes", "zes", "ches", "shes")):
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    return w[:-1] if len(w) > 4 and w.endswith("e") else w


def _parts(text: str) -> set[str]:
    """Stemmed word parts of a text (identifiers split on _, dots and camelCase)."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", text)
    return {stem(p) for p in _PART.findall(spaced) if not p.isdigit()}


def _numbers(text: str) -> set[float]:
    return {float(n) for n in _NUMBER.findall(text)}


def claim_terms(claim: str) -> list[tuple[str, str]]:
    """(kind, term) pairs: kind is "literal", "number", "ident" or "word"; duplicates removed."""
    out: list[tuple[str, str]] = []
    for m in _TERM.finditer(claim):
        lit = m.group(1) or m.group(2) or m.group(3)
        if lit:
            t = ("literal", lit.strip().lower())
            out.extend(("number", n) for n in _NUMBER.findall(lit) if ("number", n) not in out)
        elif m.group(4):
            t = ("number", m.group(4))
        else:
            tok = m.group(5)
            end = m.end()
            if "_" in tok.strip("_") or "." in tok or re.search(r"[a-z][A-Z]", tok) \
                    or claim[end:end + 1] == "(":
                t = ("ident", tok.lower())
            else:
                w = tok.lower().strip("_")
                if len(w) < 3 or w in STOPWORDS or w in _EXTRA_STOP:
                    continue
                t = ("word", stem(w))
        if t[1] and t not in out:
            out.append(t)
    return out


class _Rarity:
    """Document frequency of word parts over the repository's lines (built once per corpus)."""

    def __init__(self, corpus):
        self.df: Counter[str] = Counter()
        self.constants: dict[str, set[float]] = {}  # NAME = 100 -> {"max_page_size": {100.0}}
        self.n = 0
        for f in corpus.files:
            for line in corpus.lines(f.path):
                self.n += 1
                self.df.update(_parts(line))
                m = _CONSTANT.match(line)
                if m:
                    self.constants.setdefault(m.group(1).lower(), set()).update(_numbers(m.group(2)))

    def resolved(self, lines: str) -> dict[str, set[float]]:
        """Values of the constants the lines name (code found their definitions)."""
        names = {n.lower() for n in re.findall(r"[A-Z][A-Z0-9_]*[A-Z0-9]", lines)}
        return {n: self.constants[n] for n in names if n in self.constants}

    def weight(self, parts: set[str]) -> float:
        """Rare is heavy: log(1 + N / (1 + df)) of the rarest part; unknown parts count as rare."""
        if not parts:
            return 1.0
        df = min(self.df.get(p, 0) for p in parts)
        return math.log(1 + self.n / (1 + df))


_CACHE: "weakref.WeakKeyDictionary[object, _Rarity]" = weakref.WeakKeyDictionary()


def _rarity(corpus) -> _Rarity:
    r = _CACHE.get(corpus)
    if r is None:
        r = _CACHE[corpus] = _Rarity(corpus)
    return r


def _present(kind: str, term: str, low: str, compact: str, parts: set[str], nums: set[float]) -> bool:
    if kind == "number":
        return float(term) in nums
    if kind in ("literal", "ident"):
        return term in low or re.sub(r"[\W_]", "", term) in compact
    return term in parts or (len(term) >= 4 and any(p.startswith(term) for p in parts))


def share(claim: str, lines: str, corpus=None) -> Support:
    """Weighted share of the claim's terms that are on ``lines`` (ok is not decided here).
    Without a corpus every term weighs by its kind only."""
    terms = claim_terms(claim)
    if not terms:
        return Support(False, 0.0, missing=["(the claim has no distinctive content)"])
    low = lines.lower()
    compact = re.sub(r"[\W_]", "", low)
    parts, nums = _parts(lines), _numbers(lines)
    rar = _rarity(corpus) if corpus is not None else None
    total = got = 0.0
    present, missing = [], []
    for kind, term in terms:
        w = (_HARD if kind != "word" else 1.0) * (rar.weight(_parts(term) or {term}) if rar else 1.0)
        total += w
        if _present(kind, term, low, compact, parts, nums):
            got += w
            present.append(term)
        else:
            missing.append(term)
    return Support(False, got / total if total else 0.0, present=present, missing=missing)


def support(claim: str, lines: str, corpus=None) -> Support:
    """Does ``lines`` (the picked line, quoted by code) support ``claim`` (the model's words)?

    Two rules, both on text only: (1) a claim that states numbers must have one of them on the
    line, or be the value of a constant the line names (code finds the definition); invented
    figures are the commonest unsupported claim. (2) the claim's weighted share on the line plus
    the line's weighted share in the claim reaches MIN_SUPPORT: a claim copied onto a
    neighbouring line shares a word or a name with it, rarely both its content and the line's.
    """
    fwd = share(claim, lines, corpus)
    back = share(lines, claim, corpus) if claim_terms(lines) else Support(False, 0.0)
    fwd.line_share = back.share
    nums = {float(t) for k, t in claim_terms(claim) if k == "number"}
    if nums and not nums & _numbers(lines):
        consts = _rarity(corpus).resolved(lines) if corpus is not None else {}
        via = {name for name, vals in consts.items() if nums & vals}
        # a value found only through a constant's definition is that definition's fact: the
        # claim must also say something else that this line says
        fwd.numbers_ok = bool(via) and any(t not in via for t in fwd.present)
    fwd.ok = fwd.numbers_ok and fwd.share + fwd.line_share >= MIN_SUPPORT
    return fwd
