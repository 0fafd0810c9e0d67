"""Shards: the units a corpus scan is cut into, the same on every executor.

A shard is a whole file, or a byte range of a big file that starts at a line start. The plan
depends only on the files' sizes (never on the number of cores or nodes), so a local run and a
Ray run count exactly the same stretches and their merged tables are equal line for line.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Callable

from rlm.corpus.beneath import open_file

SPLIT_MIN = 48 << 20  # files from this size are cut into several shards
SHARD_BYTES = 32 << 20  # about this much a shard, for files that are cut


@dataclass(frozen=True)
class Shard:
    """One stretch of one file: bytes [start, end), `file` its index in the scanned list."""

    index: int
    file: int
    path: str
    start: int
    end: int
    line0: int | None = None  # lines of its file before it, when the plan knows (a window's)

    @property
    def id(self) -> str:
        return f"shard-{self.index + 1}"

    @property
    def bytes(self) -> int:
        return self.end - self.start

    def where(self) -> str:
        return f"{self.path} bytes {self.start:,}-{self.end:,}"


def cut_points(path: str, size: int, parts: int) -> list[tuple[int, int]]:
    """`parts` byte ranges of the file, each starting at a line start (none empty)."""
    cuts = [0]
    with open_file(path) as fh:
        for k in range(1, parts):
            fh.seek(size * k // parts)
            fh.readline()  # to the next line start
            cuts.append(max(cuts[-1], fh.tell()))
    cuts.append(size)
    return [(a, b) for a, b in zip(cuts, cuts[1:]) if b > a]


def parts_for(size: int, shard_bytes: int = SHARD_BYTES, split_min: int = SPLIT_MIN) -> int:
    return 1 if size < split_min else max(2, math.ceil(size / shard_bytes))


def plan_shards(paths: list[str], shard_bytes: int | None = None,
                split_min: int | None = None) -> list[Shard]:
    """Every non-empty file's shards, in file order. RLM_SHARD_MB overrides the shard size
    (and the size from which a file is cut), for tests and benchmarks."""
    env = os.environ.get("RLM_SHARD_MB")
    if shard_bytes is None:
        shard_bytes = int(float(env) * (1 << 20)) if env else SHARD_BYTES
    if split_min is None:
        split_min = shard_bytes if env else SPLIT_MIN
    shards: list[Shard] = []
    for fi, p in enumerate(paths):
        size = os.path.getsize(p)
        if not size:
            continue
        n = parts_for(size, shard_bytes, split_min)
        ranges = cut_points(p, size, n) if n > 1 else [(0, size)]
        for a, b in ranges:
            shards.append(Shard(len(shards), fi, str(p), a, b))
    return shards


def plan_ranges(ranges: list[tuple[int, str, int, int]], line_at: Callable[[int, int], int]
                ) -> list[tuple[int, Shard]]:
    """Shards of some byte ranges of files (a time window's lines), each with the index of
    its range: a range is cut where the whole file's plan cuts, so a window's shards are
    pieces of the file's own shards, the same on every executor. `ranges`: (file index, path,
    start, end), every start a line start; `line_at(file, offset)`: that file's lines before
    `offset`."""
    plans: dict[str, list[tuple[int, int]]] = {}
    out: list[tuple[int, Shard]] = []
    for k, (fi, path, a, b) in enumerate(ranges):
        cuts = plans.get(str(path))
        if cuts is None:
            cuts = plans[str(path)] = [(s.start, s.end) for s in plan_shards([path])]
        for s, e in cuts:
            lo, hi = max(a, s), min(b, e)
            if lo < hi:
                out.append((k, Shard(len(out), fi, str(path), lo, hi, line_at(fi, lo))))
    return out
