"""What the model read (line ranges per file), for audit and mine; and the event a finished job
sends (rlm.engine.events.UnitDone: the same fields as ask's chunks). Failed jobs become
``coverage.chunks_failed`` entries through rlm.engine.ledger.failed_parts (one per file)."""

from __future__ import annotations

from dataclasses import dataclass, field

from rlm.corpus.lines import merge_ranges
from rlm.repo.corpus import RepoCorpus
from rlm.engine import ledger
from rlm.engine.events import UnitDone


@dataclass
class ReadTracker:
    """Which lines of which files the model was shown in successful calls."""

    ranges: dict[str, list[tuple[int, int]]] = field(default_factory=dict)

    def add(self, path: str, a: int, b: int) -> None:
        self.ranges.setdefault(path, []).append((a, b))

    def lines(self, path: str) -> int:
        return sum(b - a + 1 for a, b in merge_ranges(self.ranges.get(path, [])))

    def total_lines(self) -> int:
        return sum(self.lines(p) for p in self.ranges)

    def total_bytes(self, corpus: RepoCorpus) -> int:
        n = 0
        for p, rs in self.ranges.items():
            ls = corpus.lines(p)
            for a, b in merge_ranges(rs):
                n += sum(len(ls[i - 1].encode("utf-8", "replace")) + 1
                         for i in range(a, min(b, len(ls)) + 1))
        return n

    def covers(self, path: str, n_lines: int) -> bool:
        m = merge_ranges(self.ranges.get(path, []))
        return bool(m) and m[0][0] <= 1 and m[0][1] >= n_lines


def done_event(job, outcome, budget) -> UnitDone:
    """A job (anything with ``id`` and ``shown()``) ended: the typed event for every sink."""
    unit = ledger.unit_of(job.id, ledger.ranges_of((p, n) for p, a, b in job.shown()
                                                   for n in (a, b)))
    return UnitDone.of(unit, outcome.status, outcome.reason, budget.usage)
