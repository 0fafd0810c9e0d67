"""Scoring by code against the answer keys. Never by asking a model whether it did well.

Findings are plain dicts shaped like the report's (``verified``, ``claim``,
``source: {line_start, line_end}``). A key line counts as found when a *verified* finding's cited
range contains it. Precision is the share of verified findings that cite at least one line the
case considers relevant; it is None when there is no verified finding at all.
"""

from __future__ import annotations

import re
from typing import Iterable

from rlm.engine.reducer import numbers_and_ids


def _src(f: dict) -> tuple[int, int]:
    s = f.get("source") or {}
    return int(s.get("line_start", 0)), int(s.get("line_end", s.get("line_start", 0)))


def verified(findings: Iterable[dict]) -> list[dict]:
    return [f for f in findings if f.get("verified")]


def cited_lines(findings: Iterable[dict]) -> set[int]:
    """Every line inside the range of a verified finding."""
    out: set[int] = set()
    for f in verified(findings):
        a, b = _src(f)
        out.update(range(a, b + 1))
    return out


def cites_any(f: dict, lines: set[int]) -> bool:
    a, b = _src(f)
    return any(a <= ln <= b for ln in lines)


def score_lines(findings: list[dict], targets: list[int],
                relevant: Iterable[int] | None = None) -> dict:
    """recall: share of target lines cited by a verified finding; precision: share of verified
    findings that cite a relevant line (default: the targets)."""
    rel = set(relevant if relevant is not None else targets)
    got = cited_lines(findings)
    hits = [t for t in targets if t in got]
    v = verified(findings)
    prec = (sum(cites_any(f, rel) for f in v) / len(v)) if v else None
    return {"recall": len(hits) / len(targets) if targets else None, "precision": prec,
            "found": hits, "missed": [t for t in targets if t not in got],
            "verified_findings": len(v)}


_MONTHS = ("january february march april may june july august september october november "
           "december").split()


def _norm(text: str) -> str:
    t = text.lower().replace("$", " ")
    t = re.sub(r"(?<=\d),(?=\d{3}\b)", "", t)  # 285,000 -> 285000
    return " ".join(t.split())


def value_in_text(value: str, text: str) -> bool:
    """Whether a key value (a money amount, a count, a date like "April 14") is stated in text.

    Numbers match as whole numbers ("9" is not in "19"); 285,000 also matches 285000 and 285k;
    "April 14" also matches "14 April" and "April 14th"."""
    v, t = _norm(value), _norm(text)
    if re.fullmatch(r"\d+", v):
        pats = [rf"(?<![\d.]){v}(?![\d])"]
        if v.endswith("000") and len(v) > 3:
            pats.append(rf"(?<![\d.]){v[:-3]}\s?k\b")
        return any(re.search(p, t) for p in pats)
    m = re.fullmatch(r"([a-z]+) (\d{1,2})", v)
    if m and m.group(1) in _MONTHS:
        mon, day = m.groups()
        return bool(re.search(rf"\b{mon}\s+{day}(?:st|nd|rd|th)?\b", t)
                    or re.search(rf"\b{day}(?:st|nd|rd|th)?\s+(?:of\s+)?{mon}\b", t))
    return v in t


def score_revised(findings: list[dict], answer: str, revision: dict) -> dict:
    """A revised value counts when the final value's line is cited by a verified finding or the
    final value is stated in the answer. Precision: share of verified findings citing any of the
    topic's value lines. `stale`: the answer states an earlier value and not the final one."""
    values = revision["values"]
    final = values[-1]
    lines = {v["line"] for v in values}
    final_cited = final["line"] in cited_lines(findings)
    final_said = value_in_text(final["value"], answer or "")
    earlier_said = [v["value"] for v in values[:-1] if value_in_text(v["value"], answer or "")]
    v = verified(findings)
    prec = (sum(cites_any(f, lines) for f in v) / len(v)) if v else None
    return {"recall": 1.0 if (final_cited or final_said) else 0.0, "precision": prec,
            "final_cited": final_cited, "final_in_answer": final_said,
            "earlier_in_answer": earlier_said, "stale": bool(earlier_said) and not final_said,
            "verified_findings": len(v)}


def score_fault(failed: list[dict], statement: str, complete: bool, expected: list[str]) -> dict:
    """The coverage must name exactly the chunks the server failed: a chunk counts as named when
    it is in chunks_failed *and* in the coverage statement."""
    listed = [c["chunk"] for c in failed]
    named = {c for c in listed if c in statement}
    exp = set(expected)
    hit = exp & named
    return {"recall": len(hit) / len(exp) if exp else None,
            "precision": len(hit) / len(set(listed)) if listed else None,
            "exact": set(listed) == exp and named == exp and not complete,
            "listed": listed, "expected": sorted(exp), "complete": complete}


def preservation(map_claims: list[str], final_claims: list[str]) -> dict:
    """Numbers and identifiers in (verified) map findings that no final finding keeps."""
    before: set[str] = set()
    for c in map_claims:
        before |= numbers_and_ids(c)
    after: set[str] = set()
    for c in final_claims:
        after |= numbers_and_ids(c)
    missing = sorted(before - after)
    return {"total": len(before), "missing": len(missing), "missing_examples": missing[:10],
            "share_missing": (len(missing) / len(before)) if before else None}
