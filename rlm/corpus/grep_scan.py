"""The grep scan as a shard scan (rlm.executor.scan), for the Ray executor: each shard returns
its matches (byte offset, matched text) in file order, at most `max_lines + 1` distinct lines of
them; the driver walks the merged matches exactly as the one-process search does (same counts,
same truncation), turning offsets into line numbers with the file's own index. A shard that
failed is named by rlm.pipeline.strategies.grep, with its lines and bytes."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rlm.corpus.beneath import open_file
from rlm.executor.scan import FailedShard, scan_shards
from rlm.executor.shards import Shard


@dataclass
class GrepPart:
    """One shard's matches, and its line count (for the numbering past a failed shard)."""

    hits: list[tuple[int, bytes]] = field(default_factory=list)  # (offset in file, lowered)
    lines: int = 0


def grep_shard(path: str, start: int, end: int, threads: int, pattern: bytes,
               max_lines: int) -> GrepPart:
    """Matches of `pattern` (case-insensitive) in bytes [start, end) of the file."""
    with open_file(path) as fh:
        fh.seek(start)
        data = fh.read(end - start)
    part = GrepPart(lines=data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1))
    distinct, last_line_end = 0, -1
    for m in re.compile(pattern, re.IGNORECASE).finditer(data):
        if m.start() > last_line_end:  # a new line (matches never hold a newline)
            distinct += 1
            if distinct > max_lines + 1:
                break
            nl = data.find(b"\n", m.start())
            last_line_end = len(data) if nl == -1 else nl
        part.hits.append((start + m.start(), m.group(0).lower()))
    return part


def _merge(hits: list, part: GrepPart, shard: Shard) -> None:
    hits.extend(part.hits)


def _skip(hits: list, shard: Shard, lines: int) -> None:
    pass  # offsets, not line numbers, cross the shards: nothing to advance


def grep_shards(path: str, pattern: bytes, max_lines: int
                ) -> tuple[list[tuple[int, bytes]], list[FailedShard]]:
    """Every shard's matches in file order, and the shards that failed."""
    hits: list[tuple[int, bytes]] = []
    res = scan_shards([path], grep_shard, (pattern, max_lines), hits, _merge, _skip, GrepPart)
    return hits, res.failed
