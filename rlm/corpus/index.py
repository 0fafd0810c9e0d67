"""Index, don't ingest: cut a file into chunks on line boundaries, sized from the model window.

A chunk (:class:`rlm.corpus.chunk.Chunk`, the one chunk type) is an id and a line range of the
file; its text is built only when a sub-call needs it, with the original 1-based line numbers
printed before each line so the model can cite them. A single line longer than a chunk is cut
by bytes (declared).
"""

from __future__ import annotations

from typing import Iterator

from rlm.corpus.chunk import Chunk, Part, ShownLines
from rlm.corpus.source import TextSource

__all__ = ["Chunk", "Part", "ShownLines", "chunk_source", "iter_chunks"]


def chunk_source(src: TextSource, max_bytes: int, prefix: str = "c",
                 line_ranges: list[tuple[int, int]] | None = None) -> list[Chunk]:
    """Cut the whole file (or only the given line ranges) into chunks of at most max_bytes."""
    return list(iter_chunks(src, max_bytes, prefix, line_ranges))


def iter_chunks(src: TextSource, max_bytes: int, prefix: str = "c",
                line_ranges: list[tuple[int, int]] | None = None) -> Iterator[Chunk]:
    """The chunks one at a time, so a fan-out over 20,000 of them never holds them all."""
    offs = src.offsets
    n = len(offs)
    size = src.size
    ranges = line_ranges or ([(1, n)] if n else [])
    count = 0

    def make(a_line: int, b_line: int, piece: tuple[int, int] | None = None) -> Chunk:
        nonlocal count
        count += 1
        return Chunk(f"{prefix}{count:04d}", (Part(src.display, a_line, b_line, piece),), src)

    for lo, hi in ranges:
        start = lo
        while start <= hi:
            a = offs[start - 1]
            end = start
            # grow line by line until the next line would overflow max_bytes
            while end < hi and (offs[end + 1] if end + 1 < n else size) - a <= max_bytes:
                end += 1
            b = offs[end] if end < n else size
            if b - a > max_bytes and end == start:
                # one line longer than a chunk: cut it by bytes (never mid UTF-8 sequence)
                p = a
                while p < b:
                    q = min(b, p + max_bytes)
                    while q < b and q > p and (src.data[q] & 0xC0) == 0x80:
                        q -= 1
                    yield make(start, start, (p, q))
                    p = q
            else:
                yield make(start, end)
            start = end + 1
