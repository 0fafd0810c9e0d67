"""Count masked line shapes over a file at disk speed, with their rates per window.

The file is read in blocks cut at newlines (plain reads, not mmap, so resident memory stays
flat however big the file; ~256 blocks a file, 64 KB to 1 MB each); each block is masked by
`mask_block` (numpy) and its lines are counted with a C-level Counter. Files from 48 MB are
cut into shards of ~32 MB (rlm.executor.shards), counted on the run's executor (worker
processes, or Ray tasks) and merged in file order: `count_templates` and `count_source` are in
rlm.corpus.template_scan. The
blocks double as the windows of the rate rules (rlm/corpus/signals.py); the time of each
block's first and last line (rlm/corpus/clock.py: a few lines a block, not every line) puts
them on the log's clock.
"""

from __future__ import annotations

import math
import resource
from array import array
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Iterable, Iterator

from rlm.corpus.clock import timed_blocks
from rlm.corpus.beneath import open_file
from rlm.corpus.mask import mask_block
from rlm.corpus.timeparse import line_time
from rlm.engine.interrupt import checkpoint

BLOCK_MIN, BLOCK_MAX = 1 << 16, 1 << 20
WINDOW_BLOCK_MIN = 1 << 13  # a time window's blocks: enough of them for its time rules
WINDOWS = 256  # blocks a file is read in (the rate rules' windows), within the sizes above
IN_FLIGHT = 4  # masked blocks queued ahead of the counter: bounds memory
SERIES_CAP = 8_000_000  # (template, block) rate entries kept, ~64 MB at most


def block_size(size: int) -> int:
    return max(BLOCK_MIN, min(BLOCK_MAX, size // WINDOWS))


def hit_lines(block: bytes, rx) -> Iterator[tuple[int, bytes]]:
    """(line index in the block, 0-based; the line's bytes) of each line holding a match of
    the bytes pattern `rx`, once per line however many matches it holds: newlines are counted
    only from the last hit on, so a block with few hits costs one regex pass."""
    seen, at, index = -1, 0, 0
    for m in rx.finditer(block):
        s = block.rfind(b"\n", 0, m.start()) + 1
        if s <= seen:
            continue
        e = block.find(b"\n", m.start())
        e = len(block) if e == -1 else e
        seen = e
        index += block.count(b"\n", at, s)
        at = s
        yield index, block[s:e]


def read_blocks(path, start: int = 0, end: int | None = None,
                block: int = BLOCK_MAX) -> Iterator[tuple[int, bytes]]:
    """(byte offset, block) over [start, end), every block ending at a newline (the last one
    may not). `start` must be a line start; `end` a line start or the file size."""
    with open_file(path) as fh:
        fh.seek(start)
        left = (end - start) if end is not None else None
        carry, at = b"", start
        while True:
            want = block if left is None else min(block, left)
            data = fh.read(want) if want > 0 else b""
            if left is not None:
                left -= len(data)
            if not data:
                if carry:
                    yield at, carry
                return
            data = carry + data if carry else data
            nl = data.rfind(b"\n")
            if nl == -1:
                carry = data
                continue
            carry = data[nl + 1:]
            yield at, data[: nl + 1]
            at += nl + 1


def masked_blocks(blocks: Iterable[tuple[int, bytes]],
                  threads: int = 2) -> Iterator[tuple[int, bytes]]:
    """(offset, mask_block(block)) in order, with at most IN_FLIGHT blocks ahead."""
    if threads <= 1:
        for at, b in blocks:
            yield at, mask_block(b)
        return
    with ThreadPoolExecutor(threads) as ex:
        pending: list = []
        for at, b in blocks:
            pending.append((at, ex.submit(mask_block, b)))
            if len(pending) >= IN_FLIGHT:
                a, f = pending.pop(0)
                yield a, f.result()
        for a, f in pending:
            yield a, f.result()


class TemplateCounter:
    """Counts masked lines; keeps the first `keep` line numbers of every template, and per
    template the blocks it occurs in with its count there (its rate over the file)."""

    def __init__(self, keep: int = 20, max_templates: int = 200_000):
        self.keep, self.max_templates = keep, max_templates
        self.counts: dict[bytes, list] = {}  # template -> [count, [line numbers]]
        self.lines = 0  # the last line number counted (== lines counted, unless ranged)
        self.counted: int | None = None  # lines counted, when only some ranges were
        self.overflow = False
        self.block_line = array("q")  # first line (0-based) of each block
        self.block_offset = array("q")  # byte offset of each block
        self.block_file = array("I")  # which file of a folder each block is in
        self.block_t0 = array("d")  # time of each block's first timed line (nan: none read)
        self.block_t1 = array("d")  # time of its last timed line
        self.block_seg = array("I")  # which range of a time window each block is in
        self.file = self.seg = 0  # what `feed` notes for the next block
        self.range_end: dict[int, int] = {}  # a range's last block -> the range's end offset
        self.series: dict[bytes, tuple[array, array]] = {}  # template -> (block ids, counts)
        self.series_entries = 0
        self.series_overflow = False
        self.workers: list[dict] = []  # per worker process: cpu_s, rss_mb

    def feed(self, masked: bytes, offset: int = 0,
             times: tuple[float, float] = (math.nan, math.nan)) -> None:
        """Count one block of masked lines (ending at a newline, except maybe the last);
        `times`: its first and last line's time, when read (rlm.corpus.clock.block_times)."""
        if masked.endswith(b"\n"):
            masked = masked[:-1]
        rows = masked.split(b"\n")
        base = self.lines  # line number of rows[0] is base + 1
        bid = len(self.block_line)
        self.block_line.append(base)
        self.block_offset.append(offset)
        self.block_file.append(self.file)
        self.block_seg.append(self.seg)
        self.block_t0.append(times[0])
        self.block_t1.append(times[1])
        self.lines += len(rows)
        counts, keep, series = self.counts, self.keep, self.series
        track = self.series_entries < SERIES_CAP
        need: dict[bytes, int] = {}  # templates that still want line numbers: how many
        per_block = Counter(rows)
        for t, c in per_block.items():
            e = counts.get(t)
            if e is None:
                if len(counts) >= self.max_templates:
                    self.overflow = True
                    continue
                counts[t] = e = [0, []]
            if len(e[1]) < keep:
                need[t] = min(c, keep - len(e[1]))
            e[0] += c
            if track:
                sr = series.get(t)
                if sr is None:
                    series[t] = sr = (array("I"), array("I"))
                sr[0].append(bid)
                sr[1].append(c)
        if track:
            self.series_entries += len(per_block)
        elif not self.series_overflow:
            self.series_overflow = True
        if need:
            self._place(rows, base, need)

    def _place(self, rows: list[bytes], base: int, need: dict[bytes, int]) -> None:
        counts = self.counts
        if len(need) <= 8:  # a few: C-level list.index scans
            for t, k in need.items():
                at, got = -1, counts[t][1]
                for _ in range(k):
                    at = rows.index(t, at + 1)
                    got.append(base + at + 1)
            return
        for i, t in enumerate(rows):  # many (a new log, or a high-variety one): one pass
            k = need.get(t)
            if k:
                counts[t][1].append(base + i + 1)
                need[t] = k - 1

    def absorb(self, other: "TemplateCounter", file: int | None = None) -> None:
        """Append the counts of the next stretch of the file (counted separately), or of the
        next file of a folder (`file`: its index)."""
        dl, db = self.lines, len(self.block_line)
        for t, (c, lines) in other.counts.items():
            e = self.counts.get(t)
            if e is None:
                if len(self.counts) >= self.max_templates:
                    self.overflow = True
                    continue
                self.counts[t] = e = [0, []]
            e[0] += c
            room = self.keep - len(e[1])
            if room > 0:
                e[1].extend(ln + dl for ln in lines[:room])
        for t, (ids, cs) in other.series.items():
            sr = self.series.setdefault(t, (array("I"), array("I")))
            sr[0].extend(i + db for i in ids)
            sr[1].extend(cs)
        self.series_entries += other.series_entries
        self.series_overflow |= other.series_overflow
        self.workers += other.workers
        self.overflow |= other.overflow
        self.block_line.extend(b + dl for b in other.block_line)
        self.block_offset.extend(other.block_offset)
        self.block_t0.extend(other.block_t0)
        self.block_t1.extend(other.block_t1)
        self.block_seg.extend(other.block_seg)
        if file is None:
            self.block_file.extend(other.block_file)
        else:
            self.block_file.extend([file] * len(other.block_line))
        self.lines += other.lines


def _count_range(path, start: int, end: int | None, keep: int, max_templates: int,
                 threads: int, block: int, worker: bool = False) -> TemplateCounter:
    tc = TemplateCounter(keep, max_templates)
    times: dict[int, tuple[float, float]] = {}
    blocks = timed_blocks(read_blocks(path, start, end, block), times)
    for at, m in masked_blocks(blocks, threads):
        checkpoint(at)  # Ctrl-C stops the scan here (a no-op in worker processes)
        tc.feed(m, at, times.pop(at))
    if worker:  # a worker's own use, for the benchmark (not visible to the parent's rusage)
        ru = resource.getrusage(resource.RUSAGE_SELF)
        tc.workers.append({"cpu_s": ru.ru_utime + ru.ru_stime, "rss_mb": ru.ru_maxrss / 1024})
    return tc


class BlockReader:
    """A few blocks read and masked again, for the rate picks only: the line numbers of a
    shape in a block, and the exact time of its first or last line there (the rules on the
    clock see blocks; this turns "in the block 16:49-17:59" into "last seen at 17:00:00").
    `paths`: the file, or the files of a folder in the order they were counted. At most
    `max_blocks` blocks are read; past that, `time` answers None (the block's bounds stand)."""

    def __init__(self, paths: list, tc: TemplateCounter, max_blocks: int = 32,
                 canon: dict[bytes, bytes] | None = None):
        self.paths, self.tc, self.max_blocks = paths, tc, max_blocks
        self.canon = canon  # shape -> the shape that stands for its event kind (templates.by_kind)
        self._cache: dict[int, tuple[list[bytes], list[bytes]]] = {}

    def _rows(self, bid: int, must: bool = False) -> tuple[list[bytes], list[bytes]] | None:
        got = self._cache.get(bid)
        if got is None:
            room = len(self._cache) < self.max_blocks
            if not room and not must:
                return None
            tc = self.tc
            start = tc.block_offset[bid]
            same_file = (bid + 1 < len(tc.block_offset) and bid not in tc.range_end
                         and tc.block_file[bid + 1] == tc.block_file[bid])
            end = tc.block_offset[bid + 1] if same_file else tc.range_end.get(bid)
            with open_file(self.paths[tc.block_file[bid]]) as fh:
                fh.seek(start)
                data = fh.read(end - start) if end is not None else fh.read()
            rows = mask_block(data).split(b"\n")
            if self.canon:
                rows = [self.canon.get(r, r) for r in rows]
            got = (rows, data.split(b"\n"))
            if room:
                self._cache[bid] = got
        return got

    def masked_rows(self, bid: int) -> list[bytes]:
        """Block `bid`'s lines, masked (read again even when the cache is full)."""
        return self._rows(bid, must=True)[0]

    def lines(self, bid: int, template: bytes) -> list[int]:
        rows, _ = self._rows(bid, must=True)
        base = self.tc.block_line[bid]
        return [base + i + 1 for i, r in enumerate(rows) if r == template]

    def time(self, template: bytes, bid: int, last: bool) -> float | None:
        got = self._rows(bid)
        if got is None:
            return None
        rows, raw = got
        order = range(len(rows) - 1, -1, -1) if last else range(len(rows))
        i = next((i for i in order if rows[i] == template), None)
        return None if i is None else line_time(raw[i][:400].decode("utf-8", "replace"))


def lines_in_block(paths: list, tc: TemplateCounter, bid: int, template: bytes) -> list[int]:
    """Line numbers of `template` in window `bid` (read again: only for the few rate picks)."""
    return BlockReader(paths, tc).lines(bid, template)


def file_pieces(src, ranges: list[tuple[int, int]]):
    """(file index, file, first, last in that file, global number of its line 0) per piece."""
    files = getattr(src, "sources", None)
    if files is None:
        yield from ((0, src, a, b, 0) for a, b in ranges)
        return
    for first, last in ranges:
        for fi, (f, start) in enumerate(zip(files, src.starts)):
            a, b = max(first, start + 1), min(last, start + f.line_count)
            if a <= b:
                yield fi, f, a - start, b - start, start
