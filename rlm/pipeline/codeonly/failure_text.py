"""The answer to "cite every line that reports a failure", by code.

The lines are those of the event kinds that report a failure (rlm.corpus.anomalies:
`reports_failure`, the rule stated in the answer's "Read as" line). The answer gives the exact
count in all and per kind (severity, count, first line), shows a sample of the lines as
findings ("60 of 196 shown": the first line of every kind first, then more of each in turn),
names apart the kinds the rule leaves out (a caller's error, ERROR with no failure word) with
their counts, and the JSON report carries every line number as ranges (`matched.lines`).
"""

from __future__ import annotations

from rlm.pipeline.codeonly.count_text import shown
from rlm.words import n_

SAMPLE = 60  # lines cited as findings
KINDS_SHOWN = 40  # kinds the answer's table shows (every kind is in the JSON report)


class FailureKinds:
    """Per kind (keyed by the kind's template): severity, count, file, its first lines."""

    def __init__(self) -> None:
        self.rows: dict[str, dict] = {}
        self.left_out: dict[str, list] = {}  # template -> [count, reason, src, first line]

    def add(self, src, ln: int, kind, severity: str) -> None:
        row = self.rows.get(kind.template)
        if row is None:
            row = self.rows[kind.template] = {"severity": severity, "count": 0, "src": src,
                                              "first": ln, "lines": []}
        row["count"] += 1
        if len(row["lines"]) < SAMPLE:
            row["lines"].append((src, ln))

    def leave_out(self, src, kind, reason: str) -> None:
        got = self.left_out.setdefault(kind.template, [0, reason, src, kind.first_line])
        got[0] += kind.count

    def ranked(self) -> list[tuple[str, dict]]:
        return sorted(self.rows.items(), key=lambda kv: (-kv[1]["count"], kv[1]["first"]))

    def sample(self, size: int = SAMPLE) -> list[tuple[object, int, str]]:
        """(src, line, template) of up to `size` lines: every kind's first line, then the
        next line of each kind in turn, in file order at the end."""
        queues = [(t, list(r["lines"])) for t, r in self.ranked()]
        out: list[tuple[object, int, str]] = []
        while len(out) < size and any(q for _, q in queues):
            for t, q in queues:
                if q and len(out) < size:
                    src, ln = q.pop(0)
                    out.append((src, ln, t))
        return sorted(out, key=lambda x: (x[0].display, x[1]))


def answer(q, total: int, scanned: int, kinds: FailureKinds, cited: int, files: int = 1) -> str:
    ranked = kinds.ranked()
    out = [f"**{total:,}** {'line' if total == 1 else 'lines'} that report a failure, in "
           f"{n_(len(ranked), 'event kind')} (counted by code over {scanned:,} lines, "
           f"{q.scope(files)}; no model read or counted anything)."]
    if ranked:
        out += ["", "| kind | severity | lines | first line |", "|---|---|---:|---|"]
        for t, r in ranked[:KINDS_SHOWN]:
            cell = shown(t).replace("|", "\\|")
            out.append(f"| `{cell}` | {r['severity']} | {r['count']:,} | "
                       f"{r['src'].display}:{r['first']} |")
        if len(ranked) > KINDS_SHOWN:
            rest = sum(r["count"] for _, r in ranked[KINDS_SHOWN:])
            out.append(f"| ({len(ranked) - KINDS_SHOWN:,} more kinds) | | {rest:,} | |")
    if kinds.left_out:
        out += ["", left_out_text(kinds)]
    out += ["", holds(total, len(ranked), cited)]
    return "\n".join(out)


def left_out_text(kinds: FailureKinds) -> str:
    rows = sorted(kinds.left_out.items(), key=lambda kv: -kv[1][0])
    n = sum(v[0] for _, v in rows)
    names = "; ".join(f"`{shown(t, 80)}` ({c:,}, first at {src.display}:{ln}: {why})"
                      for t, (c, why, src, ln) in rows[:5])
    more = f"; and {len(rows) - 5:,} more" if len(rows) > 5 else ""
    return (f"Not counted as failures: {n_(n, 'line')} of {n_(len(rows), 'kind')} the rule "
            f"leaves out: {names}{more}.")


def holds(total: int, n_kinds: int, cited: int) -> str:
    return (f"The answer holds {n_(total, 'line')} in {n_(n_kinds, 'kind')}; {cited} of "
            f"{total:,} shown below as findings (the first line of every kind first); every "
            "line number is in the JSON report (`matched.lines`, as ranges).")
