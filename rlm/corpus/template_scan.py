"""The template count as a shard scan (rlm.executor.scan): each shard is counted into its own
TemplateCounter by `count_shard`, and the counters merge by template, in shard order, with
`TemplateCounter.absorb`. A failed shard keeps its place: its lines are counted (not profiled),
so later line numbers stay the file's, and the profile names it in the coverage statement.
A time window's lines are scanned the same way (`scan_window`): its ranges cut where the
file's own shards are cut, each piece counted on the executor and placed at its line."""

from __future__ import annotations

import os

from dataclasses import dataclass, field

from rlm.corpus.counter import (BLOCK_MAX, WINDOW_BLOCK_MIN, WINDOWS, TemplateCounter,
                                _count_range, block_size, file_pieces)
from rlm.errors import RlmError
from rlm.executor.scan import ScanResult, scan_planned, scan_shards
from rlm.executor.shards import Shard, plan_ranges


def count_shard(path: str, start: int, end: int, threads: int, keep: int,
                max_templates: int) -> TemplateCounter:
    """One shard's table (runs in a worker process or a Ray task; threads: mask threads).
    Blocks follow the whole file's size, as for a plain count: the rate rules' windows."""
    block = block_size(os.path.getsize(path))
    return _count_range(path, start, end, keep, max_templates, threads, block,
                        worker=threads == 1)


def _merge(tc: TemplateCounter, part: TemplateCounter, shard: Shard) -> None:
    tc.absorb(part, file=shard.file)


def _skip(tc: TemplateCounter, shard: Shard, lines: int) -> None:
    last = len(tc.block_line) - 1
    if last >= 0 and tc.block_file[last] == shard.file:  # the block before stops at the gap
        tc.range_end[last] = shard.start
    tc.lines += lines


def scan_templates(paths: list[str], keep: int = 20,
                   max_templates: int = 200_000) -> ScanResult:
    """One template table over the files (in order; a folder's line numbers run on across
    its files), counted shard by shard on the run's executor."""
    tc = TemplateCounter(keep, max_templates)
    res = scan_shards([str(p) for p in paths], count_shard, (keep, max_templates), tc, _merge,
                      _skip)
    if res.failed:
        tc.counted = tc.lines - res.failed_lines
    return res


def count_templates(path, keep: int = 20, max_templates: int = 200_000) -> TemplateCounter:
    """One file's table, shard by shard on the run's executor (worker processes, one per
    core, or Ray tasks), merged in file order. A shard that failed is an error here: callers
    that name failed shards in a coverage statement use `scan_templates`."""
    return _whole(scan_templates([str(path)], keep, max_templates))


def count_source(src, keep: int = 20, max_templates: int = 200_000,
                 line_ranges: list[tuple[int, int]] | None = None) -> TemplateCounter:
    """One file (a TextSource) or a folder's LogSet (one table across its files, global line
    numbers), whole or only `line_ranges` (a time window)."""
    if line_ranges is not None:
        return _whole(scan_window(src, line_ranges, keep, max_templates))
    files = getattr(src, "sources", None) or [src]
    return _whole(scan_templates([f.path for f in files], keep, max_templates))


def _whole(res: ScanResult) -> TemplateCounter:
    if res.failed:
        f = res.failed[0]
        raise RlmError(f"{f.shard.id} ({f.shard.where()}) could not be counted: {f.reason}")
    return res.table


def count_window_shard(path: str, start: int, end: int, threads: int, keep: int,
                       max_templates: int, block: int) -> TemplateCounter:
    """One piece of a time window (blocks sized for the window, not the file)."""
    return _count_range(path, start, end, keep, max_templates, threads, block,
                        worker=threads == 1)


@dataclass
class _Window:
    """The window's table while its pieces merge: where each piece's lines start, its range."""

    tc: TemplateCounter
    base: list[int]  # global number of each file's line 0 (a folder's files run on)
    seg: dict[int, int] = field(default_factory=dict)  # shard index -> its range (clock segment)
    ends: dict[int, bool] = field(default_factory=dict)  # shard index -> it ends its range


def _merge_window(w: _Window, part: TemplateCounter, shard: Shard) -> None:
    tc, first = w.tc, len(w.tc.block_line)
    tc.lines = w.base[shard.file] + (shard.line0 or 0)  # its lines are numbered from here
    tc.absorb(part, file=shard.file)
    for b in range(first, len(tc.block_line)):
        tc.block_seg[b] = w.seg[shard.index]
    if w.ends[shard.index] and len(tc.block_line) > first:
        tc.range_end[len(tc.block_line) - 1] = shard.end
    tc.counted = (tc.counted or 0) + part.lines


def _skip_window(w: _Window, shard: Shard, lines: int) -> None:
    _skip(w.tc, shard, 0)


def scan_window(src, line_ranges: list[tuple[int, int]], keep: int = 20,
                max_templates: int = 200_000) -> ScanResult:
    """Only lines first..last of each range (a time window), shard by shard on the run's
    executor; line numbers stay the file's, or a folder's global ones (`src` a LogSet: each
    range is cut at the files' bounds). Blocks are smaller here (a window is small) and carry
    their times, so the time rules run on the window's own clock; each range is its own
    segment of that clock."""
    files = getattr(src, "sources", None) or [src]
    bases = list(getattr(src, "starts", [0]))
    pieces = []
    for fi, f, first, last, _base in file_pieces(src, line_ranges):
        a = f.offsets[first - 1]
        pieces.append((fi, str(f.path), a, f.offsets[last] if last < f.line_count else f.size))
    nbytes = sum(b - a for _, _, a, b in pieces)
    block = max(WINDOW_BLOCK_MIN, min(BLOCK_MAX, nbytes // WINDOWS))
    planned = plan_ranges(pieces, lambda fi, off: files[fi].line_of_offset(off) - 1)
    tc = TemplateCounter(keep, max_templates)
    tc.counted = 0
    w = _Window(tc, bases, {s.index: k for k, s in planned},
                {s.index: s.end == pieces[k][3] for k, s in planned})
    res = scan_planned([s for _, s in planned], count_window_shard,
                       (keep, max_templates, block), w, _merge_window, _skip_window,
                       TemplateCounter, light=True)  # a window is small: in this process
    res.table = tc
    return res
