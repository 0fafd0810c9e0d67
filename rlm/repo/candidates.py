"""Candidate lines: code selects lines and shows them numbered ``[n]``; the model picks numbers;
code maps a number back to ``path:line`` and takes the quote from the file. Also the content
words of a text, and the checks that keep a weak model's output honest."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from rlm.verify import evidence
from rlm.corpus.lines import MAX_LINE_CHARS, show_line
from rlm.verify.evidence import EvidenceCheck
from rlm.repo.corpus import RepoCorpus


@dataclass
class Candidate:
    """A line code selected for the model to judge."""

    path: str
    line: int
    text: str
    why: str = ""
    severity: str | None = None


def render_candidates(cands: Sequence[Candidate], start: int = 1) -> tuple[str, dict[int, Candidate]]:
    """``== path ==`` headers and ``[n] text`` lines (a ``…`` row marks a gap within a file).
    Returns the text and the map number → candidate."""
    out: list[str] = []
    mapping: dict[int, Candidate] = {}
    prev: Candidate | None = None
    n = start
    for c in cands:
        if prev is None or c.path != prev.path:
            out.append(f"== {c.path} ==")
        elif c.line != prev.line + 1:
            out.append("    …")
        text, _ = show_line(c.text)
        out.append(f"[{n}] {text}".rstrip())
        mapping[n] = c
        prev = c
        n += 1
    return "\n".join(out), mapping


def candidate_cost(c: Candidate) -> int:
    return min(len(c.text), MAX_LINE_CHARS) + 8


def pack_candidates(cands: Sequence[Candidate], max_chars: int, max_lines: int = 10_000) -> list[list[Candidate]]:
    """Split an ordered candidate list into groups fitting max_chars (headers included)."""
    groups: list[list[Candidate]] = []
    cur: list[Candidate] = []
    cost = 0
    for c in cands:
        k = candidate_cost(c) + (len(c.path) + 8 if not cur or cur[-1].path != c.path else 0)
        if cur and (cost + k > max_chars or len(cur) >= max_lines):
            groups.append(cur)
            cur, cost = [], 0
            k = candidate_cost(c) + len(c.path) + 8
        cur.append(c)
        cost += k
    if cur:
        groups.append(cur)
    return groups


def check_pick(corpus: RepoCorpus, mapping: dict[int, Candidate], n: int,
               model_quote: str = "") -> tuple[Candidate | None, EvidenceCheck]:
    """Models cite, code quotes: the picked number must be one that was shown; the quote is the
    line's text from the file (or the model's optional quote, which must then be there)."""
    c = mapping.get(n)
    if c is None:
        shown = f"{min(mapping)}-{max(mapping)}" if mapping else "none"
        return None, EvidenceCheck("rejected", f"[{n}]", 0, 0, "",
                                   f"picked number {n}, which was not shown (shown: {shown})")
    ls = corpus.lines(c.path)
    quote = model_quote.strip() or (ls[c.line - 1] if 0 < c.line <= len(ls) else "")
    if not quote.strip():
        quote = ""
    ev = evidence.check(corpus.root, f"{c.path}:{c.line}", quote,
                        require_quote=bool(model_quote.strip()))
    return c, ev


# ------------------------------------------------------------------------------ words

STOPWORDS = frozenset("""
a an and any are as at be been being but by can could did do does doing done each every for from
get gets got had has have how if in into is it its itself just may might more most much must my
no not of on once one only or other our out over own per same should so some such than that the
their them then there these they this those through to too under until up upon use used uses
using very was we were what when where which while who whom whose why will with within without
would you your yes happen happens happened kind way ways thing things whether also about after
before between both does doesn there's what's it's let lets make makes made long last many times
""".split())


def words(text: str, min_len: int = 3) -> list[str]:
    """Lower-case content words of a text (identifiers split on _ and camelCase too)."""
    out: list[str] = []
    for tok in re.findall(r"[A-Za-z][A-Za-z0-9_]*", text):
        parts = [tok] + re.split(r"_+|(?<=[a-z0-9])(?=[A-Z])", tok)
        for p in parts:
            w = p.lower()
            if len(w) >= min_len and w not in STOPWORDS and w not in out:
                out.append(w)
    return out


# ------------------------------------------------------------------------------ weak models


def is_weak_model(model) -> bool:
    """The embedded model (SmolLM2-135M) cannot cite or judge reliably."""
    return str(getattr(model, "name", "")).startswith("local")


def repetitive(text: str) -> bool:
    """Degenerate output of a weak model: one word (or word part) over and over."""
    parts = [w.lower() for w in re.findall(r"[A-Za-z0-9]{3,}", text)]
    return bool(parts) and max(parts.count(w) for w in parts) > 3


def sane_claim(claim: str, line: str) -> bool:
    """A weak model's claim is kept only when it is a few words that mention the line."""
    words_c = re.findall(r"[A-Za-z0-9_]{3,}", claim)
    if len(claim.strip()) < 8 or not words_c or repetitive(claim):
        return False
    low = line.lower()
    return any(w.lower() in low for w in words_c)
