"""From a question to search patterns, by code: content words, a light stemmer, and the
programming synonyms of recipes/mine-rules.toml."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

from rlm.repo.candidates import STOPWORDS


@lru_cache(maxsize=1)
def rules() -> dict:
    text = resources.files("rlm.recipes").joinpath("mine-rules.toml").read_text("utf-8")
    return tomllib.loads(text)


def synonyms() -> dict[str, list[str]]:
    return rules()["synonyms"]


def generic_identifiers() -> frozenset[str]:
    return frozenset(rules()["generic_identifiers"])


def stem(w: str) -> str:
    w = w.lower()
    if len(w) > 5 and w.endswith("ies"):
        return w[:-3]
    if len(w) > 5 and w.endswith("ing"):
        return w[:-3]
    if len(w) > 4 and w.endswith("ed") and not w.endswith("eed"):
        return w[:-2]
    if len(w) > 4 and w.endswith("es") and w[-3] in "sxz" or w.endswith(("ches", "shes")):
        return w[:-2]
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    if len(w) > 4 and w.endswith("y"):
        return w[:-1]
    return w


@dataclass
class Keyword:
    word: str
    patterns: list[str]
    rx: re.Pattern = field(init=False)

    def __post_init__(self) -> None:
        alts = []
        for p in self.patterns:
            e = re.escape(p)
            alts.append(e if len(p) >= 4 else rf"(?<![a-z0-9]){e}(?![a-z0-9])")
        self.rx = re.compile("|".join(alts))

    def hits(self, lower_line: str) -> bool:
        return self.rx.search(lower_line) is not None


def keywords(question: str) -> list[Keyword]:
    """Content words of a question, stemmed, with a few programming synonyms."""
    out: list[Keyword] = []
    seen: set[str] = set()
    syn = synonyms()
    for tok in re.findall(r"[A-Za-z][A-Za-z0-9_\-]*", question):
        for w in [tok] + re.split(r"[-_]+", tok):
            lw = w.lower()
            if len(lw) < 3 or lw in STOPWORDS or lw in seen:
                continue
            seen.add(lw)
            pats = [stem(lw)] + syn.get(lw, [])
            pats = [p for p in dict.fromkeys(pats) if len(p) >= 2]
            out.append(Keyword(lw, pats))
    return out
