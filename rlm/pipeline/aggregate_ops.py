"""Which aggregate a question asks for, and code's exact answer to it (rlm/pipeline/aggregate.py counts).

Counts, differences, shares and percentages, the most or least common label, the top k, sums,
averages, minimum and maximum, each over one label or all records, and per label. Every number
is computed here from checked records (sums in exact decimals), and each links to the records
behind it. Items code can see but no model classified are *unknown*: a count or share is then
the range the true value lies in; a sum of non-negative values has a lower bound and no known
upper bound; an average, minimum or maximum covers the known records only, and says how many
are unknown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from rlm.pipeline.aggregate import _ITEMS, Counted, Tally, mentioned_labels

_SUM = r"\b(?:total|sum)\b"
_MEAN = r"\b(?:average|mean)\b"
_MAX = r"\b(?:highest|maximum|max|largest|longest|biggest|greatest)\b"
_MIN = r"\b(?:lowest|minimum|min|smallest|shortest|least)\b(?! (?:common|frequent))"
_PER = re.compile(r"\b(?:per|for each|for every|grouped by|broken down by) ([a-z]+)\b", re.I)
_TOP = re.compile(r"\btop[- ](\d+|two|three|four|five|ten)\b", re.I)
_WORDNUM = {"two": 2, "three": 3, "four": 4, "five": 5, "ten": 10}
VALUE_KINDS = ("sum", "mean", "max", "min")
REFS = 6  # items listed in the answer after each number; all of them are in the JSON report


@dataclass
class Op:
    kind: str  # count, more, share, rank, top, per, sum, mean, max, min
    labels: list[str]
    metric: str = "count"  # per label: count, sum, mean, max or min
    k: int = 1  # top k
    least: bool = False  # rank: the least common
    group: str = "label"  # per: what the records are grouped by (the reader's labels)
    percent: bool = False  # share: in percent


def _metric(q: str) -> str:
    for name, rx in (("mean", _MEAN), ("sum", _SUM), ("max", _MAX), ("min", _MIN)):
        if re.search(rx, q) and not (name == "sum" and "how many" in q):
            return name
    return "count"


def parse(question: str, known: list[str]) -> Op:
    """The aggregate a question asks for (labels: the ones it names, else all records)."""
    q = question.lower()
    labs = mentioned_labels(question, known)
    per = next((m.group(1) for m in _PER.finditer(q)
                if not re.fullmatch(_ITEMS, m.group(1))), None)  # not "minutes per record"
    if per:
        return Op("per", [], metric=_metric(q), group=per)
    top = _TOP.search(q)
    if top:
        n = top.group(1)
        return Op("top", [], k=int(n) if n.isdigit() else _WORDNUM[n])
    if re.search(r"\b(?:most|least) (?:common|frequent)\b", q):
        return Op("rank", [], least=bool(re.search(r"\bleast (?:common|frequent)\b", q)))
    if re.search(r"\b(?:more|fewer)\b", q) and len(labs) >= 2:
        return Op("more", labs[:2])
    if re.search(r"\b(?:fraction|share|percentage|proportion|percent)\b", q) and labs:
        return Op("share", labs[:1], percent=bool(re.search(r"\bpercent", q)))
    metric = _metric(q)
    if metric != "count":
        return Op(metric, labs[:1])
    return Op("count", labs)


def dec(v: float) -> Decimal:
    return Decimal(repr(float(v)))  # the shortest decimal that reads back as v: exact sums


def fmt(d: Decimal) -> str:
    d = d.normalize() if d == d.to_integral_value() else d
    return f"{d.quantize(Decimal(1)):,}" if d == d.to_integral_value() else f"{d.normalize():,f}"


def mean(vals: list[Decimal]) -> Decimal:
    return (sum(vals) / len(vals)).quantize(Decimal("0.01"), ROUND_HALF_UP)


def _rng(lo: int, hi: int) -> str:
    return f"{lo:,}" if lo == hi else f"between {lo:,} and {hi:,}"


def _refs(recs: list[Counted], values: bool = False) -> str:
    shown = ", ".join(f"{r.item} (line {r.line})" + (f" {fmt(dec(r.value))}" if values else "")
                      for r in recs[:REFS])
    more = f", and {len(recs) - REFS:,} more in the JSON report" if len(recs) > REFS else ""
    return f"{shown}{more}" if recs else "no item"


def _scope(labs: list[str]) -> str:
    return f" with the label '{labs[0]}'" if labs else ""


def answer(question: str, tally: Tally) -> tuple[str, dict]:
    """The answer, composed by code from the tally, and the aggregate for the JSON report."""
    c = tally.counts()
    ranked = sorted(c, key=lambda lab: (-c[lab], lab))
    op = parse(question, ranked)
    u = tally.unknown
    why = f" ({'; '.join(tally.unknown_where[:5])})" if u else ""
    if op.kind in VALUE_KINDS or (op.kind == "per" and op.metric != "count"):
        lines, result, scope = _value_answer(op, tally, ranked, why)
    else:
        lines, result = _count_answer(op, tally, ranked, why)
        scope = []
    lines.append("Counts by code over the records the model extracted and code checked: "
                 + ", ".join(f"{lab} {c[lab]:,}" for lab in ranked)
                 + (f"; unknown {u:,}" if u else "") + ".")
    if scope:
        lines.append(f"Values by code ({len(scope):,} records): {_refs(scope, values=True)}.")
    else:
        for lab in (op.labels or ranked[:1]):
            if lab in c:
                lines.append(f"'{lab}' counts: {_refs(tally.items(lab))}.")
    agg = {"op": op.kind, "metric": op.metric, "result": result,
           "counts": dict(c), "total": sum(c.values()), "unknown": u,
           "unknown_where": tally.unknown_where, "rejected": len(tally.rejected),
           "labels_asked": op.labels,
           "items": {lab: [[r.item, r.path, r.line] for r in tally.items(lab)] for lab in ranked},
           "value_items": [[r.item, r.path, r.line, r.value] for r in scope]}
    return "\n\n".join(lines), agg


def _count_answer(op: Op, tally: Tally, ranked: list[str], why: str) -> tuple[list[str], object]:
    c, u = tally.counts(), tally.unknown
    total = sum(c.values())
    n = total + u
    if op.kind == "more":
        a, b = op.labels
        d = c[a] - c[b]
        return [f"{_rng(d - u, d + u) if u else f'{d:,}'} more records have the label "
                f"'{a}' ({c[a]:,}) than '{b}' ({c[b]:,}){why}."], \
            {"low": d - u, "high": d + u}
    if op.kind == "share":
        a = op.labels[0]
        lo, hi = (c[a] / n, (c[a] + u) / n) if n else (0.0, 0.0)
        if op.percent:
            val = f"{100 * lo:.2f}%" if not u else f"between {100 * lo:.2f}% and {100 * hi:.2f}%"
            head = f"The percentage of records with the label '{a}' is {val}"
        else:
            val = f"{lo:.4f}" if not u else f"between {lo:.4f} and {hi:.4f}"
            head = f"The share of records with the label '{a}' is {val}"
        return [f"{head} ({c[a]:,} of {n:,}){why}."], {"low": lo, "high": hi}
    if op.kind in ("rank", "top") and not ranked:  # no record checked out: nothing to rank
        return [f"No label can be named: no record the model extracted checked out against its "
                f"line{why}."], None
    if op.kind == "rank":
        top = ranked[-1] if op.least else ranked[0]
        other = (ranked[-2] if op.least else ranked[1]) if len(ranked) > 1 else top
        gap = abs(c[top] - c[other])
        known = " among the known records" if u and gap <= u else ""  # the order may change
        out = [f"The {'least' if op.least else 'most'} common label{known} is '{top}' "
               f"({c[top]:,} of {total:,} records)."]
        tied = [lab for lab in ranked if lab != top and c[lab] == c[top]]
        if tied:  # a tie is said, not hidden by the alphabetical order that broke it
            out[0] = out[0][:-1] + ", tied with " + ", ".join(f"'{t}'" for t in tied) + "."
        if u:
            out.append(f"{u:,} records are unknown{why}: "
                       + ("they cannot change the order." if gap > u else
                          f"they could change the order (the gap to '{other}' is {gap:,})."))
        return out, top
    if op.kind == "top":
        top = ranked[:op.k]
        nxt = ranked[op.k] if len(ranked) > op.k else None
        gaps = [c[ranked[i]] - c[ranked[i + 1]] for i in range(min(op.k, len(ranked) - 1))]
        fixed = not u or all(g > u for g in gaps)
        out = [f"The top {len(top)} labels by number of records"
               + ("" if fixed else " among the known records") + ": "
               + ", ".join(f"'{lab}' ({_rng(c[lab], c[lab] + u)})" for lab in top) + "."]
        if u:
            out.append(f"{u:,} records are unknown{why}: "
                       + ("they cannot change this order." if fixed else
                          "they could change this order" + (f" or bring in '{nxt}'" if nxt else "")
                          + "."))
        return out, top
    if op.kind == "per":
        row = ", ".join(f"'{lab}' {_rng(c[lab], c[lab] + u)}" for lab in ranked)
        return [f"Records per {op.group}: {row}{why}."], {lab: {"low": c[lab], "high": c[lab] + u}
                                                     for lab in ranked}
    if op.labels:
        return [f"{_rng(c[a], c[a] + u)} records have the label '{a}'{why}." for a in op.labels], \
            {a: {"low": c[a], "high": c[a] + u} for a in op.labels}
    return [f"{_rng(total, total + u)} records were counted{why}."], {"low": total, "high": total + u}


def _one_value(metric: str, recs: list[Counted]) -> tuple[Decimal | None, Counted | None]:
    if not recs:
        return None, None
    if metric == "sum":
        return sum(dec(r.value) for r in recs), None
    if metric == "mean":
        return mean([dec(r.value) for r in recs]), None
    pick = (max if metric == "max" else min)(recs, key=lambda r: (r.value, -r.line)
                                              if metric == "max" else (r.value, r.line))
    return dec(pick.value), pick


def _value_answer(op: Op, tally: Tally, ranked: list[str], why: str):
    """Sums, averages and extremes over the records' values, for one scope or per label."""
    u = tally.unknown
    metric = op.metric if op.kind == "per" else op.kind
    scope = [r for r in tally.records if (not op.labels or r.label in op.labels)]
    valued = [r for r in scope if r.value is not None]
    nonneg = all(r.value >= 0 for r in valued)
    out: list[str] = []
    name = {"sum": "Sum", "mean": "Average", "max": "Maximum", "min": "Minimum"}[metric]
    if op.kind == "per":
        rows, result = [], {}
        for lab in ranked:
            v, pick = _one_value(metric, [r for r in valued if r.label == lab])
            if v is None:
                continue
            n = sum(1 for r in valued if r.label == lab)
            bound = "at least " if u and metric == "sum" and nonneg else ""
            at = f", {pick.item} line {pick.line}" if pick else ""
            rows.append(f"'{lab}' {bound}{fmt(v)} ({n:,} records{at})")
            result[lab] = float(v)
        known = " (known records only)" if u and metric != "sum" else ""
        out.append(f"{name} per {op.group}{known}: " + ", ".join(rows) + ".")
    else:
        v, pick = _one_value(metric, valued)
        result = None if v is None else float(v)
        sc = _scope(op.labels)
        if v is None:
            out.append(f"No record{sc} has a value to {metric}.")
        elif metric == "sum":
            bound = "at least " if u and nonneg else "over the known records " if u else ""
            out.append(f"{name}: {bound}{fmt(v)} (the values of {len(valued):,} records{sc}).")
        elif metric == "mean":
            out.append(f"{name}{' of the known records' if u else ''}: {fmt(v)} (over "
                       f"{len(valued):,} records{sc}).")
        else:
            out.append(f"{name}{' among the known records' if u else ''}: {fmt(v)} "
                       f"({pick.item}, line {pick.line}, among {len(valued):,} records{sc}).")
    if u:
        more = {"sum": "no upper bound is known" if nonneg else
                "they could add any amount (some values are negative)",
                "mean": "the average covers the known records only",
                "max": "one of them could hold a higher value",
                "min": "one of them could hold a lower value"}[metric]
        out.append(f"{u:,} records are unknown{why}: {more}.")
    if len(valued) < len(scope):
        out.append(f"{len(scope) - len(valued):,} records{_scope(op.labels)} have no value "
                   "on their line and are not in it.")
    return out, result, valued
