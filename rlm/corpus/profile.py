"""Log profile: mask variable tokens, count templates, pick rare templates and error-level lines.

Code does the detection here: on a line-oriented log the interesting lines are those whose
shape is rare (a template seen a handful of times among hundreds of thousands) or whose level
says so. The file is read in ~256 KB blocks cut at newlines (plain reads, not mmap, so resident
memory stays flat however big the file); each block is masked by `mask_block` (numpy, in a
small thread pool that overlaps with the counting) and its lines are counted with a C-level
Counter. Newlines are never touched, so the masked block splits into exactly the original lines.
"""

from __future__ import annotations

import multiprocessing
import os
import re
import resource
from array import array
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Iterable, Iterator

from rlm.corpus.mask import mask_block
from rlm.corpus.records import to_records
from rlm.corpus.source import TextSource
from rlm.interrupt import ScanInterrupted, checkpoint

_ERROR_LEVEL = re.compile(rb"\b(ERROR|ERR|FATAL|CRITICAL|CRIT|PANIC|EMERG|ALERT|SEVERE)\b|\bpanic:")
BLOCK = 1 << 20
IN_FLIGHT = 4  # masked blocks queued ahead of the counter: bounds memory
SERIES_CAP = 8_000_000  # (template, block) rate entries kept, ~64 MB at most
PARALLEL_MIN = 48 << 20  # files from this size are counted by one process per core
MAX_WORKERS = 4


@dataclass
class Template:
    text: str
    count: int
    lines: list[int]  # up to `keep` line numbers (1-based, ascending)
    error_level: bool


@dataclass
class Profile:
    lines: int
    bytes: int
    templates_total: int
    templates: list[Template]  # rare and error-level templates, the candidates' shapes
    candidates: list[int] = field(default_factory=list)  # candidate line numbers, ascending
    common: list[Template] = field(default_factory=list)  # the most frequent shapes, for context
    overflow: bool = False  # too many distinct templates: tracking was capped (declared)
    rare_max: int = 0
    record_end: dict[int, int] = field(default_factory=dict)  # candidate -> last line of its record
    record_of: dict[int, int] = field(default_factory=dict)  # picked line -> its record's header
    workers: list[dict] = field(default_factory=list)  # worker processes' cpu_s and rss_mb


def read_blocks(path, start: int = 0, end: int | None = None,
                block: int = BLOCK) -> Iterator[tuple[int, bytes]]:
    """(byte offset, block) over [start, end), every block ending at a newline (the last one
    may not). `start` must be a line start; `end` a line start or the file size."""
    with open(path, "rb") as fh:
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
        self.lines = 0
        self.overflow = False
        self.block_line = array("q")  # first line (0-based) of each block
        self.block_offset = array("q")  # byte offset of each block
        self.series: dict[bytes, tuple[array, array]] = {}  # template -> (block ids, counts)
        self.series_entries = 0
        self.series_overflow = False
        self.workers: list[dict] = []  # per worker process: cpu_s, rss_mb

    def feed(self, masked: bytes, offset: int = 0) -> None:
        """Count one block of masked lines (ending at a newline, except maybe the last)."""
        if masked.endswith(b"\n"):
            masked = masked[:-1]
        rows = masked.split(b"\n")
        base = self.lines  # line number of rows[0] is base + 1
        bid = len(self.block_line)
        self.block_line.append(base)
        self.block_offset.append(offset)
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

    def absorb(self, other: "TemplateCounter") -> None:
        """Append the counts of the next stretch of the file (counted separately)."""
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
        self.lines += other.lines


def _count_range(path, start: int, end: int | None, keep: int, max_templates: int,
                 threads: int, worker: bool = False) -> TemplateCounter:
    tc = TemplateCounter(keep, max_templates)
    for at, m in masked_blocks(read_blocks(path, start, end), threads):
        checkpoint(at)  # Ctrl-C stops the scan here (a no-op in worker processes)
        tc.feed(m, at)
    if worker:  # a worker's own use, for the benchmark (not visible to the parent's rusage)
        ru = resource.getrusage(resource.RUSAGE_SELF)
        tc.workers.append({"cpu_s": ru.ru_utime + ru.ru_stime, "rss_mb": ru.ru_maxrss / 1024})
    return tc


def _worker_init() -> None:
    """In our own worker processes only: keep freed numpy temporaries in the heap instead of
    returning them to the OS, so the next block does not page-fault fresh memory (~2x on the
    mask). glibc only; elsewhere a no-op."""
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 64 << 20)  # M_MMAP_THRESHOLD
        libc.mallopt(-1, 128 << 20)  # M_TRIM_THRESHOLD
    except (OSError, AttributeError):
        pass


def split_ranges(path, size: int, parts: int) -> list[tuple[int, int]]:
    """`parts` byte ranges of the file, each starting at a line start."""
    cuts = [0]
    with open(path, "rb") as fh:
        for k in range(1, parts):
            fh.seek(size * k // parts)
            fh.readline()  # to the next line start
            cuts.append(max(cuts[-1], fh.tell()))
    cuts.append(size)
    return [(a, b) for a, b in zip(cuts, cuts[1:]) if b > a]


def count_templates(path, keep: int = 20, max_templates: int = 200_000,
                    workers: int | None = None) -> TemplateCounter:
    """One pass over the file. Big files are split into one stretch per core, counted in
    worker processes (the mask and the counting hold the GIL too often for threads to
    scale) and merged in file order."""
    size = os.path.getsize(path)
    if workers is None:
        workers = min(os.cpu_count() or 1, MAX_WORKERS) if size >= PARALLEL_MIN else 1
    ranges = split_ranges(path, size, workers) if workers > 1 else [(0, size)]
    if len(ranges) <= 1:
        return _count_range(path, 0, None, keep, max_templates, 2)
    ctx = multiprocessing.get_context("forkserver")
    with ProcessPoolExecutor(len(ranges), mp_context=ctx, initializer=_worker_init) as ex:
        futs = [ex.submit(_count_range, str(path), a, b, keep, max_templates, 1, True)
                for a, b in ranges]
        try:
            while not all(f.done() for f in futs):  # wake up for Ctrl-C, not only at the end
                wait(futs, timeout=0.2)
                checkpoint()
        except ScanInterrupted:
            for p in list(getattr(ex, "_processes", {}).values()):  # stop the workers now
                p.terminate()
            raise
        parts = [f.result() for f in futs]
    tc = parts[0]
    for other in parts[1:]:
        tc.absorb(other)
    return tc


def default_rare_max(n: int) -> int:
    # "rare" is relative: 5 sightings are rare among 600,000 lines, common among 180
    return max(1, min(5, n // 20_000)) if n < 100_000 else max(5, n // 100_000)


def profile_log(src: TextSource, rare_max: int | None = None, keep: int = 20,
                max_templates: int = 200_000, max_candidates: int = 400) -> Profile:
    """One pass over the file. A template is rare when seen at most `rare_max` times
    (default: 1 on small logs rising to 5 at 100,000 lines, then 0.001% of the lines)."""
    tc = count_templates(src.path, keep, max_templates) if src.size else TemplateCounter()
    n = tc.lines
    if rare_max is None:
        rare_max = default_rare_max(n)
    picked: list[Template] = []
    candidates: list[int] = []
    for t, (c, lines) in tc.counts.items():
        err = bool(_ERROR_LEVEL.search(t))
        if c <= rare_max or err:
            picked.append(Template(t.decode("utf-8", "replace"), c, lines, err))
    # Rarest first; error-level shapes before others at equal rarity.
    picked.sort(key=lambda x: (x.count, not x.error_level, x.lines[0]))
    for tp in picked:
        for ln in tp.lines:
            if len(candidates) >= max_candidates:
                break
            candidates.append(ln)
    common = sorted(
        (Template(t.decode("utf-8", "replace"), c, v[:1], bool(_ERROR_LEVEL.search(t)))
         for t, (c, v) in tc.counts.items() if c > rare_max),
        key=lambda x: -x.count,
    )[:10]
    # a stack-trace line is its record's header's candidate: one exception, one candidate
    heads, record_end, record_of = to_records(src, sorted(set(candidates)))
    return Profile(lines=n, bytes=src.size, templates_total=len(tc.counts), templates=picked,
                   candidates=heads, common=common, overflow=tc.overflow,
                   rare_max=rare_max, record_end=record_end, record_of=record_of,
                   workers=tc.workers)
