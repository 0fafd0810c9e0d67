"""The template count as a shard scan (rlm.executor.scan): each shard is counted into its own
TemplateCounter by `count_shard`, and the counters merge by template, in shard order, with
`TemplateCounter.absorb`. A failed shard keeps its place: its lines are counted (not profiled),
so later line numbers stay the file's, and the profile names it in the coverage statement."""

from __future__ import annotations

import os

from rlm.corpus.counter import TemplateCounter, _count_range, block_size, count_line_ranges
from rlm.errors import RlmError
from rlm.executor.scan import ScanResult, scan_shards
from rlm.executor.shards import Shard


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
        return count_line_ranges(src, line_ranges, keep, max_templates)
    files = getattr(src, "sources", None) or [src]
    return _whole(scan_templates([f.path for f in files], keep, max_templates))


def _whole(res: ScanResult) -> TemplateCounter:
    if res.failed:
        f = res.failed[0]
        raise RlmError(f"{f.shard.id} ({f.shard.where()}) could not be counted: {f.reason}")
    return res.table
