"""Counting questions about logs ("how many X?", "how many X per Y?", "most common errors?"),
answered by code alone: exact counts over the matching lines (rlm/corpus/counts.py), each
group cited by its first line. No model reads, counts or words the numbers, with or without a
model configured; a time window in the question ("between 14:00 and 14:30") restricts the
count to those lines."""

from __future__ import annotations

from rlm.corpus.counts import TIME_UNITS, TOP, CountQuery, CountResult, count_lines, parse_count
from rlm.corpus.timewindow import parse_window, window_lines
from rlm.pipeline.strategies.base import Context, Result, code_finding


async def run(ctx: Context) -> Result:
    res = ctx.new_result()
    cq = parse_count(ctx.q)
    w = parse_window(ctx.q)
    merged: dict[str, list] = {}  # key -> [count, src, first line]
    total = scanned = 0
    examples: list[tuple] = []
    for src in ctx.corpus.sources:
        ranges = window_lines(src, w) if w else None
        cr: CountResult = count_lines(src, cq, ranges)
        total += cr.total
        scanned += cr.scanned
        examples += [(src, ln) for ln in cr.examples][: 10 - len(examples)]
        for k, (c, ln) in cr.groups.items():
            g = merged.setdefault(k, [0, src, ln])
            g[0] += c
        res.cov.bytes_scanned_by_code += src.size
        res.cov.lines_scanned_by_code += src.line_count
    where = f", {w.label}" if w else ""
    res.reasons.append(f"a counting question about a log: code counts {cq.what}"
                       + (f" per {cq.by}" if cq.by and cq.kind == "count" else "")
                       + f"{where} over every line; the numbers come from code, never a model")
    res.answer_parts.append(_answer(cq, total, scanned, merged, w.label if w else None))
    top = sorted(merged.items(), key=lambda kv: (-kv[1][0], kv[1][2]))[:TOP]
    cites = [(src, ln, f"{k}: {c:,} line{'s' if c != 1 else ''} (first shown)")
             for k, (c, src, ln) in top] if cq.by else [
        (src, ln, f"one of the {total:,} {cq.what}") for src, ln in examples]
    for n, (src, ln, claim) in enumerate(cites, 1):
        res.findings.append(code_finding(f"f{n}", claim, src, ln, ln, True, None, rules=["count"]))
    if w:
        res.cov.declared.append(f"counted only the lines {w.label} (found by binary search on "
                                f"the timestamps of a time-ordered log): {scanned:,} lines")
    return res


def _answer(cq: CountQuery, total: int, scanned: int, groups: dict, window: str | None) -> str:
    span = f"{scanned:,} lines" + (f" {window}" if window else "")
    head = (f"**{total:,}** {cq.what} (counted by code over {span}; no model read or counted "
            f"anything).")
    if not cq.by or not groups:
        return head
    label = "shape" if cq.kind == "top" else cq.by
    rows = sorted(groups.items(), key=lambda kv: (-kv[1][0], kv[1][2]))
    if cq.by in TIME_UNITS:  # a time series reads in time order
        rows = sorted(groups.items())
    out = [head, "", f"| {label} | lines | first line |", "|---|---:|---|"]
    for k, (c, src, ln) in rows[:TOP]:
        key = k.replace("|", "\\|")[:120]
        out.append(f"| {key} | {c:,} | {src.display}:{ln} |")
    if len(rows) > TOP:
        rest = sum(c for _, (c, _, _) in rows[TOP:])
        out.append(f"| ({len(rows) - TOP:,} more) | {rest:,} | |")
    return "\n".join(out)
