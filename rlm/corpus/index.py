"""Index, don't ingest: cut a file into chunks on line boundaries, sized from the model window.

A chunk is identified by id, path, byte and line range and a content hash. Its text is built
only when a sub-call needs it, with the original 1-based line numbers printed before each line
so the model can cite them. A single line longer than a chunk is cut by bytes (declared).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Iterator

from rlm.corpus.lines import MAX_LINE_CHARS, number_lines
from rlm.corpus.source import TextSource


@dataclass(slots=True)  # 20,000 chunks in memory at once: keep each small
class Chunk:
    id: str
    path: str
    line_start: int
    line_end: int
    byte_start: int
    byte_end: int
    sha: str
    source: TextSource
    cut: bool = False  # a piece of one over-long line (cut by bytes)

    @property
    def nbytes(self) -> int:
        return self.byte_end - self.byte_start

    def numbered_text(self, max_line_chars: int = MAX_LINE_CHARS) -> str:
        if self.cut:
            raw = bytes(self.source.data[self.byte_start:self.byte_end])
            return f"{self.line_start}| " + raw.decode("utf-8", "replace")
        lines = self.source.lines(self.line_start, self.line_end)
        return number_lines(lines, self.line_start, max_chars=max_line_chars)[0]

    def describe(self) -> str:
        part = " (piece of an over-long line, cut by bytes)" if self.cut else ""
        return f"{self.path}:{self.line_start}-{self.line_end}{part}"


class ShownLines(Sequence):
    """The lines of a file as one chunk showed them to the model, addressed by file line number
    (index 0 is line 1). Lines outside the chunk read as blank, so evidence can only be found
    in what the call was shown; a piece of an over-long line reads as that piece."""

    def __init__(self, chunk: Chunk):
        self.c = chunk
        self._shown: list[str] | None = None

    def _lines(self) -> list[str]:
        if self._shown is None:
            c = self.c
            if c.cut:
                self._shown = [bytes(c.source.data[c.byte_start:c.byte_end]).decode("utf-8",
                                                                                  "replace")]
            else:
                self._shown = c.source.lines(c.line_start, c.line_end)
        return self._shown

    def __len__(self) -> int:
        return self.c.source.line_count

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        k = i + 1 - self.c.line_start
        shown = self._lines()
        return shown[k] if 0 <= k < len(shown) else ""


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

    def make(a_line: int, b_line: int, a: int, b: int, cut: bool = False) -> Chunk:
        nonlocal count
        count += 1
        digest = hashlib.sha256(src.data[a:b]).hexdigest()[:16]
        return Chunk(f"{prefix}{count:04d}", src.display, a_line, b_line, a, b, digest, src, cut)

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
                    yield make(start, start, p, q, cut=True)
                    p = q
            else:
                yield make(start, end, a, b)
            start = end + 1
