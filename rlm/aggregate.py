"""Exact aggregation by code: a counting question is answered from typed records, never by a model.

The map step (rlm/aggregate_map.py) asks the model only to turn each chunk into records
``{line, item, label, value}``; code checks every record against its line, and this module
counts, sums, ranks and compares. Every number in the answer is code's and links to the items it
counted. Items code can see but no model classified (in failed chunks, or skipped by the reader)
are *unknown*, and the answer gives the range the true value can lie in.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

_ITEMS = (r"(?:records?|items?|entries|entry|lines?|rows?|tickets?|questions?|messages?|"
          r"requests?|events?|instances?|data points?|cases?|reports?|orders?|reviews?|"
          r"comments?|posts?|complaints?)\b")
# a count, share or ranking *of the corpus' items* ("how many tickets ...", "most common label"),
# not a question about one stated number ("how many staff may we hire?")
_WANTS = re.compile("|".join((
    r"\bhow many (?:more |fewer )?(?:[\w'-]+ ){0,3}" + _ITEMS,
    r"\bhow many\b.*\b(?:are|were|is|was) (?:about|label+ed|classified|tagged|categori[sz]ed)\b",
    r"\b(?:most|least) (?:common|frequent)\b",
    r"\bhow many (?:more|fewer)\b.*\bthan\b",
    r"\bwhat (?:fraction|share|percentage|proportion)\b.*\b(?:are|were|have|has)\b",
    r"\b(?:fraction|share|percentage|proportion|number|count) of (?:the |all )?(?:[\w'-]+ ){0,2}"
    + _ITEMS,
    r"\bper (?:label|category|type|class|user|day)\b",
    r"\bdistribution of\b",
    r"\brank(?:ing)? (?:of )?(?:the )?(?:labels|categories|types)\b")), re.I)
_QUOTED = re.compile(r"['\"`]([^'\"`]{1,60})['\"`]")
MAX_RECORDS = 60  # per call: the schema's bound; chunks are cut so that they hold fewer lines


class Record(BaseModel):
    model_config = ConfigDict(extra="forbid")
    line: int
    item: str = Field(max_length=80)
    label: str | None = Field(default=None, max_length=60)
    value: float | None = None


class RecordsResult(BaseModel):
    """Map call of an aggregation question: the chunk's records, typed, for code to count."""

    model_config = ConfigDict(extra="forbid")
    records: list[Record] = Field(default_factory=list, max_length=MAX_RECORDS)


def wants(question: str) -> bool:
    """A question about counts, sums, shares, rankings or comparisons."""
    return bool(_WANTS.search(question))


@dataclass
class Counted:
    item: str
    line: int
    label: str
    value: float | None
    path: str


@dataclass
class Tally:
    """What code counted, and what it could see but could not classify."""

    records: list[Counted] = field(default_factory=list)
    unknown: int = 0  # items seen by code that no model classified
    unknown_where: list[str] = field(default_factory=list)  # "c0007 failed", "c0003: 2 skipped"
    rejected: list[str] = field(default_factory=list)  # records that did not check out, and why

    def counts(self) -> Counter:
        return Counter(r.label for r in self.records)

    def items(self, label: str) -> list[Counted]:
        return [r for r in self.records if r.label == label]


def norm_label(label: str | None) -> str:
    return " ".join((label or "unlabelled").lower().strip(" .'\"").split()) or "unlabelled"


def check(rec: Record, line_text: str, lo: int, hi: int) -> str | None:
    """Why a record does not check out against its line, or None when it does."""
    if not lo <= rec.line <= hi:
        return f"line {rec.line} is outside the chunk ({lo}-{hi})"
    flat = " ".join(line_text.split())
    if " ".join(rec.item.split()) not in flat:
        return f"item {rec.item[:40]!r} is not on line {rec.line}"
    if rec.value is not None:
        v = rec.value
        shown = {float(x.replace(",", "")) for x in re.findall(r"-?\d[\d,]*\.?\d*", flat)
                 if x.replace(",", "").replace(".", "", 1).lstrip("-").isdigit()}
        if v not in shown:
            return f"value {v:g} is not on line {rec.line}"
    return None


def item_shape(items: list[str]) -> re.Pattern | None:
    """A pattern for the items' common shape (``R-00012`` -> letters, dash, 5 digits), when at
    least 90% of them share it: code then counts items that no model classified."""
    if len(items) < 3:
        return None

    def shape(s: str) -> str:
        out = re.sub(r"[A-Z]+", lambda m: f"[A-Z]{{{len(m.group())}}}", re.escape(s))
        out = re.sub(r"(?<![{,])\d+(?![}\d])", lambda m: f"\\d{{{len(m.group())}}}", out)
        return out

    common, n = Counter(shape(i) for i in items).most_common(1)[0]
    if n < 0.9 * len(items) or not re.search(r"\\d", common):
        return None
    return re.compile(rf"(?<![\w-]){common}(?![\w-])")


def mentioned_labels(question: str, known: list[str]) -> list[str]:
    """The labels a question asks about: the quoted ones; else known labels written as words,
    unless it names nearly all of them (then it is listing the label set, not asking)."""
    quoted = [norm_label(m) for m in _QUOTED.findall(question)]
    if quoted:
        return quoted
    low = question.lower()
    words = [lab for lab in known if re.search(rf"\b{re.escape(lab)}\b", low)]
    return words if len(words) <= 2 else []


def _rng(lo: int, hi: int) -> str:
    return f"{lo:,}" if lo == hi else f"between {lo:,} and {hi:,}"


def _refs(tally: Tally, label: str, k: int = 6) -> str:
    its = tally.items(label)
    shown = ", ".join(f"{r.item} (line {r.line})" for r in its[:k])
    more = f", and {len(its) - k:,} more in the JSON report" if len(its) > k else ""
    return f"{shown}{more}" if its else "no item"


def answer(question: str, tally: Tally) -> tuple[str, dict]:
    """The answer, composed by code from the tally, and the aggregate for the JSON report."""
    c = tally.counts()
    total, u = sum(c.values()), tally.unknown
    ranked = sorted(c, key=lambda lab: (-c[lab], lab))
    labs = mentioned_labels(question, ranked)
    q = question.lower()
    why = f" ({'; '.join(tally.unknown_where[:5])})" if u else ""
    lines: list[str] = []
    if ("more" in q or "fewer" in q) and len(labs) >= 2:
        a, b = labs[0], labs[1]
        d = c[a] - c[b]
        lines.append(f"{_rng(d - u, d + u) if u else f'{d:,}'} more records have the label "
                     f"'{a}' ({c[a]:,}) than '{b}' ({c[b]:,}){why}.")
    elif any(w in q for w in ("fraction", "share", "percentage", "proportion")) and labs:
        a = labs[0]
        lo, hi = c[a] / (total + u) if total + u else 0, (c[a] + u) / (total + u) if total + u else 0
        val = f"{lo:.4f}" if not u else f"between {lo:.4f} and {hi:.4f}"
        lines.append(f"The share of records with the label '{a}' is {val} ({c[a]:,} of "
                     f"{total + u:,}){why}.")
    elif any(w in q for w in ("most common", "most frequent", "least common", "least frequent")):
        least = "least" in q
        top = ranked[-1] if least else ranked[0]
        lines.append(f"The {'least' if least else 'most'} common label is '{top}' ({c[top]:,} "
                     f"of {total:,} records).")
        if u:
            other = ranked[-2] if least else ranked[1] if len(ranked) > 1 else top
            gap = abs(c[top] - c[other])
            lines.append(f"{u:,} records are unknown{why}: "
                         + ("they cannot change the order." if gap > u else
                            f"they could change the order (the gap to '{other}' is {gap:,})."))
    elif labs:
        for a in labs:
            lines.append(f"{_rng(c[a], c[a] + u)} records have the label '{a}'{why}.")
    else:
        lines.append(f"{_rng(total, total + u)} records were counted{why}.")
    lines.append("Counts by code over the records the model extracted and code checked: "
                 + ", ".join(f"{lab} {c[lab]:,}" for lab in ranked)
                 + (f"; unknown {u:,}" if u else "") + ".")
    for lab in (labs or ranked[:1]):
        if lab in c:
            lines.append(f"'{lab}' counts: {_refs(tally, lab)}.")
    agg = {"counts": dict(c), "total": total, "unknown": u, "unknown_where": tally.unknown_where,
           "rejected": len(tally.rejected), "labels_asked": labs,
           "items": {lab: [[r.item, r.path, r.line] for r in tally.items(lab)] for lab in ranked}}
    return "\n\n".join(lines), agg
