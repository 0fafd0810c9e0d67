"""The template table a log question is matched against, behind one small interface.

`table_for(src, ranges)` gives the rows (id, template text, exact count, first line) of one
file, or of the lines in `ranges` (a time window); `lines_of(rows)` yields every line of those
templates, in file order. Today the rows are the masked line shapes of rlm.corpus.counter
(a token with a digit becomes a variable); the event-template miner of issue 19 item 6 can
replace them here without changing the callers (rlm.strategies.counting).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from rlm.corpus.counter import count_line_ranges, count_templates
from rlm.corpus.mask import mask_block

SHOW_VAR = "<*>"
_STEP = 1 << 22


@dataclass
class Row:
    id: str
    text: str  # the template in words, variables as <*>
    count: int
    first_line: int
    key: bytes  # the masked shape (how lines_of recognises the template's lines)


def words(shape: bytes) -> str:
    return shape.decode("utf-8", "replace").replace("#", SHOW_VAR).strip()


class ShapeTable:
    """Masked line shapes with exact counts (one pass; a second pass for lines_of)."""

    def __init__(self, src, ranges: list[tuple[int, int]] | None = None):
        self.src, self.ranges = src, ranges
        if ranges is None:
            tc = count_templates(src.path, keep=1) if src.size else None
        else:
            tc = count_line_ranges(src, ranges, keep=1)
        counts = tc.counts if tc else {}
        ordered = sorted(counts.items(), key=lambda kv: (-kv[1][0], kv[1][1][:1] or [0]))
        self.rows = [Row(f"t{i}", words(k), c, (v[0] if v else 0), k)
                     for i, (k, (c, v)) in enumerate(ordered, 1)]
        self.overflow = bool(tc and tc.overflow)

    def lines_of(self, rows: list[Row]) -> Iterator[tuple[int, str, Row]]:
        """(line number, text, row) of every line of these templates, in file order."""
        by_key = {r.key: r for r in rows}
        src = self.src
        for first, last in self.ranges or [(1, src.line_count)]:
            if last < first:
                continue
            ln = first
            while ln <= last:
                upto = min(last, ln + 20_000)
                a = src.offsets[ln - 1]
                b = src.offsets[upto] if upto < src.line_count else src.size
                block = bytes(src.data[a:b])
                raw = block.split(b"\n")
                masked = mask_block(block).split(b"\n")
                for i, m in enumerate(masked[: upto - ln + 1]):
                    row = by_key.get(m)
                    if row is not None:
                        yield ln + i, raw[i].decode("utf-8", "replace").rstrip("\r"), row
                ln = upto + 1


def table_for(src, ranges: list[tuple[int, int]] | None = None) -> ShapeTable:
    return ShapeTable(src, ranges)
