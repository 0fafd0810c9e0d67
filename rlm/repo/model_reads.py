"""What the model read in audit and mine: line ranges per file, for their coverage account.

The ledger itself is rlm.engine.ledger, one for every command: failed jobs become
``coverage.chunks_failed`` entries through ``ledger.failed_parts`` (one per file), and a finished
job's event comes from ``ledger.done_event``."""

from __future__ import annotations

from dataclasses import dataclass, field

from rlm.corpus.lines import merge_ranges
from rlm.repo.corpus import RepoCorpus


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
