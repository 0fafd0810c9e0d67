"""What the model read (line ranges per file) and the coverage statement's last words, the
same for audit and mine; failed jobs become ``coverage.chunks_failed`` entries in ask's shape
(one per file: chunk id, path, line range, reason)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from rlm.repo.corpus import RepoCorpus
from rlm.schemas import FailedChunk


def merge_ranges(ranges: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(ranges):
        if out and a <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


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


def close_statement(parts: list[str], complete: bool, dry_run: bool, what: str) -> str:
    """The coverage statement's last words, the same for audit and mine."""
    if dry_run:
        parts.append("Dry run: nothing was read by the model.")
    else:
        parts.append("Complete." if complete else f"INCOMPLETE: {what} may miss what was not read.")
    return " ".join(parts)


def failed_parts(job_id: str, ranges: Iterable[tuple[str, int, int]], reason: str) -> list[FailedChunk]:
    """One ``chunks_failed`` entry per file a failed job showed: its lines there, merged."""
    by_path: dict[str, list[tuple[int, int]]] = {}
    for path, a, b in ranges:
        by_path.setdefault(path, []).append((a, b))
    out = []
    for path, rs in by_path.items():
        m = merge_ranges(rs)
        out.append(FailedChunk(chunk=job_id, path=path, line_start=m[0][0], line_end=m[-1][1],
                               reason=reason))
    return out
