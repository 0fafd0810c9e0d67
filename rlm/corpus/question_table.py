"""The template table a log question's words are matched against, behind one small interface.

`table_for(src, ranges)` gives the rows (id, template, exact count, first line) of one file,
or of the lines in `ranges` (a time window), from the event-template miner
(rlm.corpus.templates.build_table: the header's times, host and level apart, variables as
<*>); `lines_of(rows)` yields every line of those rows in file order, in one pass
(`TemplateTable.assign`), and `shapes_of(rows)` gives their masked shapes, for a shard scan. rlm.pipeline.strategies.counting reads only this interface.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from rlm.corpus.templates import build_table


@dataclass
class Row:
    id: int
    text: str  # the template in words, variables as <*>
    count: int
    first_line: int
    component: str | None = None  # the component that writes it most (None: not known)


class QuestionTable:
    def __init__(self, src, ranges: list[tuple[int, int]] | None = None):
        self.src, self.ranges = src, ranges
        self.table = build_table(src, ranges) if src.size else None
        kinds = self.table.templates if self.table else []
        self.rows = sorted((Row(k.id, k.template, k.count, k.first_line,
                                k.components[0][0] if k.components else None) for k in kinds),
                           key=lambda r: (-r.count, r.first_line))

    def shapes_of(self, rows: list[Row]) -> tuple[tuple[bytes, str], ...]:
        """(masked line shape, its template) for every shape of these rows: what a shard scan
        (rlm.corpus.count_scan) looks each masked line up in."""
        if self.table is None:
            return ()
        text = {r.id: r.text for r in rows}
        return tuple((s, text[t]) for s, t in self.table.of_shape.items() if t in text)

    def lines_of(self, rows: list[Row]) -> Iterator[tuple[int, str, Row]]:
        """(line number, text, row) of every line of these rows, in file order."""
        if not rows or self.table is None:
            return
        by_id = {r.id: r for r in rows}
        spans = self.ranges
        for ln, tid in enumerate(self.table.assign(self.src), 1):
            row = by_id.get(tid)
            if row is None:
                continue
            if spans is not None and not any(a <= ln <= b for a, b in spans):
                continue
            yield ln, self.src.line(ln, 2000), row


def table_for(src, ranges: list[tuple[int, int]] | None = None) -> QuestionTable:
    return QuestionTable(src, ranges)
