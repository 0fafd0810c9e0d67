"""The ranked table of event kinds in an "anomalies?" answer, drawn from code's rows.

Rows come from rlm.corpus.anomalies.rank_kinds: every count, time and line is code's. Shown:
the first `shown` kinds, and the answer says how many of how many.
"""

from __future__ import annotations

import re

from rlm.corpus.anomalies import KindRow
from rlm.words import n_

SHOWN = 12
TEMPLATE_CHARS = 90
HEAD = "Event kinds picked by code, ranked ("  # the first words of the answer's table
# the sentence that says how many of the table's kinds the answer shows
# (rlm.pipeline.codeonly.event_kinds.holds)
_HOLDS = re.compile(r"^The answer holds [\d,]+ event kinds?, .* kinds shown with ")


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|").replace("`", "'")


def _when(row: KindRow) -> str:
    k = row.kind
    if k.first_seen is None:
        return f"lines {k.first_line}-{k.last_line}" if k.count > 1 else f"line {k.first_line}"
    return k.first_seen if k.first_seen == k.last_seen or k.count == 1 else f"{k.first_seen} – {k.last_seen}"


def kinds_markdown(rows: list[KindRow], shown: int = SHOWN) -> str:
    """A Markdown table of the ranked kinds (template, severity, exact count, first and last
    time, where, example lines), and how many are shown."""
    if not rows:
        return ""
    lines = [(f"{HEAD}{len(rows[:shown])} of {len(rows)} shown; "
              f"{n_(sum(r.kind.count for r in rows), 'line')} in all):"), "",
             "| # | event (variables as <*>) | severity | count | first – last | where | examples |",
             "|---|---|---|---|---|---|---|"]
    for i, row in enumerate(rows[:shown], 1):
        k = row.kind
        tpl = k.template if len(k.template) <= TEMPLATE_CHARS else k.template[:TEMPLATE_CHARS] + "…"
        where = ", ".join(f"{_cell(c)} ({n})" for c, n in (row.hosts or k.components)[:3]) or "-"
        if row.hosts and len(row.hosts) > 3:
            where += f", {len(row.hosts) - 3} more"
        ex = ", ".join(f"{p}:{n}" for p, n, _ in row.examples[:3])
        lines.append(f"| {i} | `{_cell(tpl)}` | {_cell(row.severity)} | {k.count:,} | "
                     f"{_cell(_when(row))} | {where} | {ex} |")
    return "\n".join(lines)


def drop_table(answer: str) -> str:
    """The answer's Markdown without its event-kinds table (its heading line and rows) and the
    sentence saying how many of its kinds it shows: for a page that draws the kinds in a
    section of its own, with its own "N of M kinds shown", so the kinds are shown once."""
    out, skipping = [], False
    for line in answer.split("\n"):
        if line.startswith(HEAD):
            skipping = True
            continue
        if skipping and (line.startswith("|") or not line.strip()):
            continue
        skipping = False
        if not _HOLDS.match(line):
            out.append(line)
    return "\n".join(out)
