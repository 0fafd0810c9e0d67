"""Where each line starts, without a number per line in memory.

A file of 537 million short lines would need 4.3 GB for one 8-byte offset per line. This index
keeps every ``STEP``-th line start (8 bytes per 64 lines: 67 MB for that file) and finds the
others by reading one block of the file when asked; the last few blocks are kept, so a walk
through the lines in order decodes each block once.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections import OrderedDict
from typing import Callable

import numpy as np

STEP = 64  # lines per sample: memory is 8 bytes per STEP lines
_CACHED_BLOCKS = 256  # decoded blocks kept (~600 bytes each: 160 KB): 16,384 lines, more than a
# fan-out builds ahead in one batch (rlm.engine.ahead), whose chunks are then read again


class LineOffsets:
    """A read-only sequence: ``offsets[i]`` is the byte offset where line ``i + 1`` starts."""

    def __init__(self, samples: array, count: int, size: int, data: Callable[[], object]):
        self._samples = samples  # start of lines 1, 1 + STEP, 1 + 2*STEP, ...
        self._count = count
        self._size = size
        self._data = data  # the file's bytes (mmap), fetched only when a block is decoded
        self._blocks: OrderedDict[int, np.ndarray] = OrderedDict()

    @classmethod
    def scan(cls, read_blocks, size: int, data: Callable[[], object]) -> "LineOffsets":
        """Build from an iterator of consecutive byte blocks of the file (numpy finds the
        newlines a block at a time; only every STEP-th line start is kept)."""
        b = Builder(size)
        for block in read_blocks:
            b.feed(block)
        return b.finish(data)

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, i: int) -> int:
        if i < 0:
            i += self._count
        if not 0 <= i < self._count:
            raise IndexError("line offset out of range")
        k, r = divmod(i, STEP)
        if r == 0:
            return self._samples[k]
        return int(self._block(k)[r])

    def known(self, i: int) -> int | None:
        """``self[i]`` when the index keeps it (every STEP-th line), without reading the file;
        else None."""
        k, r = divmod(i, STEP)
        return self._samples[k] if r == 0 and 0 <= i < self._count else None

    def bisect_right(self, off: int) -> int:
        """How many lines start at or before ``off``: the 1-based line holding that byte."""
        k = bisect_right(self._samples, off) - 1
        if k < 0:
            return 0
        return k * STEP + int(np.searchsorted(self._block(k), off, side="right"))

    def _block(self, k: int) -> np.ndarray:
        got = self._blocks.get(k)
        if got is not None:
            self._blocks.move_to_end(k)
            return got
        a = self._samples[k]
        b = self._samples[k + 1] if k + 1 < len(self._samples) else self._size
        raw = bytes(self._data()[a:b])
        nl = np.flatnonzero(np.frombuffer(raw, np.uint8) == 10)
        starts = np.concatenate(([a], nl + (a + 1)))[:STEP]
        n = min(STEP, self._count - k * STEP)
        got = starts[:n].astype(np.int64)
        self._blocks[k] = got
        if len(self._blocks) > _CACHED_BLOCKS:
            self._blocks.popitem(last=False)
        return got


class Builder:
    """LineOffsets built block by block, by whoever reads the file anyway (the probe's pass:
    one read of the file instead of two)."""

    def __init__(self, size: int):
        self.size = size
        self.samples = array("q", [0]) if size else array("q")
        self.starts = 1 if size else 0  # line starts seen so far (line 1 starts at 0)
        self.base, self.last = 0, b""

    def feed(self, block: bytes, nl: np.ndarray | None = None) -> None:
        """The next block of the file, with its newline positions when already found."""
        if nl is None:
            nl = np.flatnonzero(np.frombuffer(block, np.uint8) == 10)
        if len(nl):
            # the line after newline k of this block is line index starts + k (0-based);
            # keep the line starts whose index is a multiple of STEP
            keep = nl[(-self.starts) % STEP::STEP] + (self.base + 1)
            self.samples.frombytes(keep.astype(np.int64).tobytes())
            self.starts += len(nl)
        self.base += len(block)
        self.last = block[-1:] or self.last

    def finish(self, data: Callable[[], object]) -> LineOffsets:
        starts, samples = self.starts, self.samples
        if self.last == b"\n":  # a trailing newline does not start a new line
            starts -= 1
            if samples and samples[-1] == self.size:
                samples.pop()
        return LineOffsets(samples, starts, self.size, data)
