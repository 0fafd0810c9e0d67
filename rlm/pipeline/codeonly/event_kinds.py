"""The answer a person reads for "anomalies?": the ranked event kinds, said by code first.

The kinds come ranked from rlm.corpus.anomalies.rank_kinds (template, severity, exact count,
first and last time as the file writes them, where, example lines) and their table from
rlm.render.kinds. Here: the first sentence names the top kind ("**Found:** 60 `data TLB
error interrupt` (FATAL) on one node, R30-M0-N9-C:J16-U01, 2005-06-11-17.32.07 – ..."), each
shown kind's example lines become a group of findings (cited `path:line`), and the JSON report
carries every kind in `matched.kinds` with what the answer holds. A model may word the groups
elsewhere; counts, times and lines stay these.
"""

from __future__ import annotations

from collections import Counter

from rlm.corpus.slots import slot_value
from rlm.render.kinds import SHOWN
from rlm.words import n_

PLACES_MAX_BYTES = 32 << 20  # the top kind's nodes or hosts: one more pass (unmeasured on big logs)


def places(src, table, kind) -> tuple[str, Counter] | None:
    """("node" or "host", exact count per value) over every line of `kind`, when its lines
    name nodes (BGL's R30-M0-N9-C:J16-U01) or syslog hosts; None otherwise."""
    if table is None or src.size > PLACES_MAX_BYTES:
        return None
    texts = [src.line(ln, 400) for ln in table.lines_of(src, kind.id)]
    for slot in ("node", "host"):
        got = Counter(slot_value(slot, t) for t in texts)
        got.pop("(none)", None)
        if got and sum(got.values()) == len(texts):
            return slot, got
    return None


def _span(row) -> str:
    k = row.kind
    a, b = k.first_seen, k.last_seen
    if not a:
        return ""
    return a if not b or b == a or k.count == 1 else f"{a} – {b}"


def _where(row, top: int = 3, place: tuple[str, Counter] | None = None) -> str:
    if place:
        slot, got = place
        if len(got) == 1:
            return f"on one {slot}, {next(iter(got))}"
        shown = ", ".join(f"{v} ({n:,})" for v, n in got.most_common(top))
        return f"on {len(got):,} {slot}s: {shown}" + (f", +{len(got) - top} more"
                                                       if len(got) > top else "")
    comps = row.kind.components
    if not comps:
        return ""
    if len(comps) == 1:
        return f"all in {comps[0][0]}"
    shown = ", ".join(f"{c} ({n:,})" for c, n in comps[:top])
    more = f", +{len(comps) - top} more" if len(comps) > top else ""
    return f"in {len(comps):,} places: {shown}{more}"


def _errorish(kind) -> bool:
    from rlm.corpus.anomalies import message_failure_words
    from rlm.corpus.severity import ERROR_RANK

    return (kind.rank is not None and kind.rank <= ERROR_RANK) or bool(
        message_failure_words(kind))


def headline(rows: list, place: tuple[str, Counter] | None = None) -> str:
    """The first sentence: the top kind, its count, severity, where and when; then how many."""
    top = rows[0]
    parts = [p for p in (_where(top, place=place), _span(top)) if p]
    failing = [r for r in rows if r.failure]
    top_text = (f"{top.kind.count:,} `{top.kind.template}` ({top.severity})"
                + (", " + ", ".join(parts) if parts else ""))
    if not any(r.failure or _errorish(r.kind) for r in rows):
        # say first that nothing fails: the top kind is then only the most unusual one
        return (f"**Found:** no event kind at error level or worse, and none with a failure "
                f"word; the most unusual of {n_(len(rows), 'kind')} picked: {top_text}.")
    rest = (f"; {n_(len(rows), 'event kind')} picked in all, {n_(len(failing), 'kind')} "
            f"reporting failures ({n_(sum(r.kind.count for r in failing), 'line')})"
            if len(rows) > 1 else "")
    return f"**Found:** {top_text}{rest}."


def holds(rows: list, shown: int = SHOWN) -> str:
    cited = sum(len(r.examples) for r in rows[:shown])
    total = sum(r.kind.count for r in rows)
    return (f"The answer holds {n_(len(rows), 'event kind')}, {n_(total, 'line')}; "
            f"{min(shown, len(rows))} of {len(rows)} kinds shown with {cited} example lines "
            "cited; every kind, with its exact count, is in the JSON report (`matched.kinds`).")


def add_event_kinds(res, rows: list, table: str, place=None) -> None:
    """Put the kinds' table first in a profile's answer, the top kind as the headline (with
    `place`: its nodes or hosts, see `places`), each shown kind's example lines as a group of
    findings, and every kind in `res.matched`."""
    from rlm.pipeline.strategies.base import finding_at

    if not rows:
        return
    res.headline = headline(rows, place)
    res.answer_parts[:0] = [table, holds(rows)]
    # a line already cited inside a multi-line record (a stack trace with its header) is not
    # cited again alone: the record is one finding, as the profile found it
    spans = [(f.source.path, f.source.line_start, f.source.line_end) for f in res.findings
             if f.source.line_end > f.source.line_start]

    def in_record(path: str, ln: int) -> bool:
        return any(p == path and a <= ln <= b for p, a, b in spans)

    groups = []
    for i, row in enumerate(rows[:SHOWN], 1):
        k, gid = row.kind, f"k{i}"
        claim = (f"{row.severity} event kind `{k.template}`: {n_(k.count, 'line')}"
                 + (f", {_where(row)}" if k.components else "")
                 + (f", {_span(row)}" if _span(row) else "")
                 + f" (picked: {'; '.join(row.whys[:2]) or row.severity})")
        examples = [e for e in row.examples if not in_record(e[0], e[1])]
        if not examples:
            continue
        for path, ln, text in examples:
            res.findings.append(finding_at(f"e{len(res.findings) + 1}", claim, path, ln, text,
                                           group=gid, rules=["event-kind"]))
        groups.append({"id": gid, "kind": "event", "key": k.template, "why": row.severity,
                       "label": None, "claim": None,
                       "lines": [ln for _, ln, _ in examples],
                       "paths": [p for p, _, _ in examples], "rules": ["event-kind"],
                       "count": k.count, "severity": row.severity})
    res.groups[:0] = groups
    res.matched = {"what": "event kinds picked by code, ranked (failures first, the worst "
                           "level first, then the biggest)",
                   "total": sum(r.kind.count for r in rows),
                   "kinds": [r.as_dict() for r in rows], "holds": holds(rows)}
