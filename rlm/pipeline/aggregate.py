"""Exact aggregation by code: a counting question is answered from typed records, never by a model.

The map step (rlm/pipeline/aggregate_map.py) asks the model only to turn each chunk into records
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
          r"comments?|posts?|complaints?|refunds?|payments?|transactions?|invoices?|sales|calls?|"
          r"sessions?|jobs?|runs?|visits?)\b")
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
    r"\b(?:per|for each|grouped by|broken down by) (?:label|category|type|class|group|kind|user|"
    r"day|week|month|region|country|customer|team|product|service|host)\b",
    r"\btop[- ](?:\d+|two|three|four|five|ten) (?:labels|categories|types|classes|groups)\b",
    # a sum, average or extreme *over the items* ("average duration of the calls")
    r"\b(?:total|sum|average|mean|highest|lowest|maximum|minimum|largest|smallest|longest|"
    r"shortest)\b[\w' ,-]{0,40}?\b(?:of|over|across|among|for) (?:the |all |these )?"
    r"(?:[\w'-]+ ){0,2}" + _ITEMS,
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


_NUMBER = re.compile(r"(?<![\w-])-?\d[\d,]*(?:\.\d+)?")


def _words_before(line_text: str, v: float) -> set[str]:
    """The word right before each place the line shows the value ("Minutes:" in "Minutes: 14")."""
    flat = " ".join(line_text.split())
    out = set()
    for m in _NUMBER.finditer(flat):
        try:
            if float(m.group(0).replace(",", "")) != v:
                continue
        except ValueError:
            continue
        before = flat[:m.start()].rstrip(" $€£")
        out.add(before.rsplit(" ", 1)[-1] if before else "")
    return out


def value_anchor(shown: list[tuple[str, float]]) -> str | None:
    """The field the values come from: the word before the value that at least 90% of the
    valued records share (at least 5 of them). A value elsewhere on its line (a user id, a
    date) is then the wrong field, and code can tell."""
    if len(shown) < 5:
        return None
    words = Counter(w for text, v in shown for w in _words_before(text, v))
    if not words:
        return None
    word, n = words.most_common(1)[0]
    return word if word and n >= 0.9 * len(shown) else None


def at_anchor(line_text: str, v: float, anchor: str) -> bool:
    return anchor in _words_before(line_text, v)


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
