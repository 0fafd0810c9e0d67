"""The answer a person reads for "anomalies?": a ranked table of event kinds, by code.

Every template of warning level or worse (the level field wherever it sits), or with words of
failure in a log that writes no level (rlm.corpus.severity), is an event kind: its template in
words, severity, exact count, first and last time as the file writes them, where it happened
(the top 3 nodes, hosts or components with counts) and up to 3 example lines with
`path:line`. Kinds rank by severity, then count. The first sentence names the top one; the
table says how many kinds and lines it holds and how many it shows. A model may word the
groups elsewhere; counts, times and lines stay these.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rlm.codeonly.count_text import shown
from rlm.corpus.severity import lexicon_words, severity, severity_name
from rlm.corpus.signals import component
from rlm.corpus.logset import LogSet
from rlm.corpus.templates import table_for
from rlm.corpus.timewindow import window_lines
from rlm.corpus.timeparse import written_time
from rlm.words import n_

WARN_RANK = 4
SHOWN_KINDS = 12
EXAMPLES = 3
_NODE = re.compile(r"\b[A-Z]\d\d-M\d-N[\dA-F]-[A-Z0-9]:J\d\d-U\d\d\b|\bnode-\d+\b")
_SYSLOG_HOST = re.compile(r"^\w{3} +\d+ [\d:]{8} (\S+)")


@dataclass
class Kind:
    template: str
    rank: int  # severity rank (0 worst); words of failure in a log without levels: WARN_RANK
    level: str  # how the severity was found: the level's name, or "failure words"
    count: int = 0
    examples: list[tuple] = field(default_factory=list)  # (src, line, text)
    last: tuple | None = None  # (src, line, text)
    where: dict[str, int] = field(default_factory=dict)
    where_kind: str = "component"
    rows: list = field(default_factory=list)

    @property
    def first(self) -> tuple:
        return self.examples[0]


def _where(text: str, row_text: str) -> tuple[str, str | None]:
    m = _NODE.search(text)
    if m:
        return "node", m.group(0)
    m = _SYSLOG_HOST.match(text)
    if m:
        return "host", m.group(1)
    return "component", component(row_text)


def when(text: str) -> str | None:
    """The line's timestamp as the file writes it."""
    return written_time(text)


def _kind_of(row, example: str, levelled: bool) -> tuple[int, str] | None:
    rank = severity(example)
    if rank is not None and rank <= WARN_RANK:
        return rank, severity_name(rank).upper()
    if not levelled and lexicon_words(row.text):
        return WARN_RANK, "failure words"
    return None


def event_kinds(sources, ranges_of=None) -> tuple[list[Kind], int]:
    """(event kinds ranked, lines scanned) over the sources (each within its window ranges,
    `ranges_of(src)`, when given)."""
    kinds: dict[str, Kind] = {}
    scanned = 0
    for src in sources:
        ranges = ranges_of(src) if ranges_of else None
        table = table_for(src, ranges)
        scanned += sum(r.count for r in table.rows)
        examples = {r.id: src.line(r.first_line, 400) for r in table.rows if r.first_line}
        with_level = sum(r.count for r in table.rows
                         if r.id in examples and severity(examples[r.id]) is not None)
        levelled = with_level * 2 >= max(1, sum(r.count for r in table.rows))
        chosen = []
        for row in table.rows:
            got = _kind_of(row, examples.get(row.id, row.text), levelled)
            if got is None:
                continue
            key = shown(row.text)
            k = kinds.get(key) or kinds.setdefault(key, Kind(key, got[0], got[1]))
            k.rows.append(row)
            chosen.append(row)
        by_row = {r.key: kinds[shown(r.text)] for r in chosen}
        for ln, text, row in table.lines_of(chosen):
            k = by_row[row.key]
            k.count += 1
            if len(k.examples) < EXAMPLES:
                k.examples.append((src, ln, text))
            k.last = (src, ln, text)
            k.where_kind, w = _where(text, row.text)
            if w:
                k.where[w] = k.where.get(w, 0) + 1
    ranked = sorted(kinds.values(), key=lambda k: (k.rank, -k.count, k.template))
    return [k for k in ranked if k.count], scanned


def _span(k: Kind) -> str:
    a, b = when(k.first[2]), when(k.last[2]) if k.last else None
    if not a:
        return ""
    return a if not b or b == a else f"{a} – {b}"


def _where_text(k: Kind, top: int = 3) -> str:
    if not k.where:
        return ""
    rows = sorted(k.where.items(), key=lambda kv: -kv[1])
    if len(rows) == 1:
        return f"on one {k.where_kind}, {rows[0][0]}"
    shown_ = ", ".join(f"{v} ({c:,})" for v, c in rows[:top])
    more = f", +{len(rows) - top} more" if len(rows) > top else ""
    return f"on {len(rows):,} {k.where_kind}s: {shown_}{more}"


def headline(kinds: list[Kind]) -> str:
    k = kinds[0]
    parts = [p for p in (_where_text(k, 1 if len(k.where) == 1 else 3), _span(k)) if p]
    total = sum(x.count for x in kinds)
    rest = (f"; {n_(len(kinds), 'event kind')} of warning level or worse in all, "
            f"{n_(total, 'line')}" if len(kinds) > 1 else "")
    return (f"**Found:** {k.count:,} `{k.template}` ({k.level})"
            + (", " + ", ".join(parts) if parts else "") + rest + ".")


def table(kinds: list[Kind]) -> str:
    total = sum(k.count for k in kinds)
    out = ["| # | event kind | severity | lines | first – last | where | examples |",
           "|---:|---|---|---:|---|---|---|"]
    for i, k in enumerate(kinds[:SHOWN_KINDS], 1):
        ex = ", ".join(f"{s.display}:{ln}" for s, ln, _ in k.examples)
        tmpl = k.template.replace("|", "\\|")
        out.append(f"| {i} | `{tmpl}` | {k.level} | {k.count:,} | {_span(k)} | "
                   f"{_where_text(k).replace('|', '/')} | {ex} |")
    shown_kinds = kinds[:SHOWN_KINDS]
    cited = sum(len(k.examples) for k in shown_kinds)
    holds = (f"The table holds {n_(len(kinds), 'event kind')}, {n_(total, 'line')}"
             + (f"; {len(shown_kinds)} of {len(kinds)} kinds shown (the other "
                f"{n_(sum(k.count for k in kinds[SHOWN_KINDS:]), 'line')} in "
                f"{len(kinds) - SHOWN_KINDS} kinds are in the JSON report, `matched.kinds`)"
                if len(kinds) > SHOWN_KINDS else "")
             + f"; {cited} example lines cited, counts and times are code's.")
    return "\n".join(out + ["", holds])


def add_event_kinds(res, src, window) -> None:
    """Put the event-kind table first in a profile's answer, its top finding as the headline,
    and each shown kind's example lines as a group of findings (rlm.strategies.profile)."""
    from rlm.strategies.base import code_finding

    sources = src.sources if isinstance(src, LogSet) else [src]
    kinds, _ = event_kinds(sources, (lambda f: window_lines(f, window)) if window else None)
    if not kinds:
        return
    res.headline = headline(kinds)
    res.answer_parts.insert(0, table(kinds))
    groups = []
    for i, k in enumerate(kinds[:SHOWN_KINDS], 1):
        gid = f"k{i}"
        claim = f"{k.level} event kind `{k.template}`: {n_(k.count, 'line')}" + (
            f", {_where_text(k)}" if k.where else "") + (f", {_span(k)}" if _span(k) else "") + (
            " (picked: failure words in a log without levels)" if k.level == "failure words"
            else f" (picked: level {k.level}, warning or worse)")
        for s, ln, _ in k.examples:
            res.findings.append(code_finding(f"e{len(res.findings) + 1}", claim, s, ln, ln, True,
                                             None, group=gid, rules=["event-kind"]))
        groups.append({"id": gid, "kind": "event", "key": k.template,
                       "why": f"{k.level}, {n_(k.count, 'line')}", "label": None, "claim": None,
                       "lines": [ln for _, ln, _ in k.examples],
                       "paths": [s.display for s, _, _ in k.examples], "rules": ["event-kind"],
                       "count": k.count, "severity": k.level})
    res.groups[:0] = groups
    res.matched = {
        "what": "event kinds of warning level or worse (or failure words in a log without "
                "levels), ranked by severity then count",
        "total": sum(k.count for k in kinds),
        "kinds": [{"template": k.template, "severity": k.level, "lines": k.count,
                   "first": f"{k.first[0].display}:{k.first[1]}",
                   "last": f"{k.last[0].display}:{k.last[1]}" if k.last else None,
                   "first_time": when(k.first[2]), "last_time": when(k.last[2]) if k.last else None,
                   "where": dict(sorted(k.where.items(), key=lambda kv: -kv[1])[:20]),
                   "shown": i < SHOWN_KINDS} for i, k in enumerate(kinds)],
        "holds": table(kinds).rsplit("\n", 1)[-1],
    }
