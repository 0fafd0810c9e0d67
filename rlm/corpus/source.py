"""One text file opened for random access: mmap, lazy line offsets, decoded line ranges.

The corpus is never read whole into a prompt; code reads it through this object. `.gz` files
and stdin are spooled to a temporary file first so offsets and line numbers refer to the
decompressed text. Invalid UTF-8 is decoded with replacement characters (declared by the probe).
"""

from __future__ import annotations

import gzip
import mmap
import os
import stat
import sys
import tempfile
from pathlib import Path

import numpy as np

from rlm.corpus.beneath import current as confined_roots
from rlm.corpus.beneath import file_size, open_file, own
from rlm.corpus.binary import is_binary
from rlm.corpus.line_offsets import LineOffsets
from rlm.corpus.spool import spool_budget
from rlm.errors import UsageError
from rlm.engine.interrupt import checkpoint



class TextSource:
    """A file as bytes (mmap) plus 1-based line access. Line numbers refer to the original file."""

    def __init__(self, path: Path, display: str | None = None, spooled: bool = False):
        self.path = path
        self.display = display or str(path)
        self.spooled = spooled
        # the size of what opening gives (confined opens: rlm.corpus.beneath), not of the name
        self.size = path.stat().st_size if spooled else file_size(path)
        self._fh = None
        self._mm: mmap.mmap | bytes | None = None
        self._offsets: LineOffsets | None = None
        self._spooled_bytes = 0

    # -- opening ------------------------------------------------------------------------------
    @classmethod
    def open(cls, path_arg: str) -> "TextSource":
        """Open a path argument: '-' is stdin, '*.gz' is decompressed, a pipe (a FIFO, or
        `<(zcat x.gz)`) is read like stdin, a device is refused by name; errors are one-liners."""
        if path_arg == "-":
            return cls._spool(sys.stdin.buffer, "<stdin>")
        p = Path(path_arg)
        try:
            mode = p.stat().st_mode
        except FileNotFoundError:
            raise UsageError(f"no such file or folder: {path_arg}") from None
        except OSError as e:
            raise UsageError(f"cannot read {path_arg}: {e.strerror or e}") from None
        if stat.S_ISDIR(mode):
            raise UsageError(f"{path_arg} is a folder, expected a file")
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISSOCK(mode):
            kind = "a socket" if stat.S_ISSOCK(mode) else "a device"
            raise UsageError(f"{path_arg} is {kind}, not a file: pipe its output instead "
                             f"(e.g. head -c 10M {path_arg} | rlm ask - ...)")
        if not os.access(p, os.R_OK):
            raise UsageError(f"cannot read {path_arg}: permission denied")
        if stat.S_ISFIFO(mode):
            if confined_roots() is not None:  # a pipe cannot be opened beneath a root safely
                raise UsageError(f"{path_arg} is a pipe: the MCP server reads files only")
            with open(p, "rb", buffering=0) as fh:
                return cls._spool(fh, path_arg)
        if p.suffix == ".gz":
            try:
                with open_file(p) as raw, gzip.GzipFile(fileobj=raw, mode="rb") as fh:
                    return cls._spool(fh, path_arg)
            except (OSError, EOFError) as e:
                raise UsageError(f"cannot decompress {path_arg}: {e}") from None
        return cls(p, display=path_arg)

    @classmethod
    def _spool(cls, stream, display: str) -> "TextSource":
        """Copy a stream to a temporary file, so it can be indexed. Refused at once when its
        first block is binary; stopped, and said, when the run's spool cap is reached."""
        tmp = tempfile.NamedTemporaryFile(prefix="rlm-spool-", suffix=".txt", delete=False)
        copied = 0
        try:
            with tmp:
                read = _interruptible_reader(stream)
                while True:
                    block = read()
                    checkpoint(copied + len(block), 0)
                    if not block:
                        break
                    if not copied and is_binary(block):
                        raise UsageError(f"{display}: binary data (NUL or control bytes in the "
                                         "first block), not text")
                    spool_budget.take(len(block), display)
                    copied += len(block)
                    tmp.write(block)
        except BaseException:
            spool_budget.give_back(copied)
            os.unlink(tmp.name)
            raise
        own(tmp.name)  # opened as it is under confinement (rlm.corpus.beneath)
        src = cls(Path(tmp.name), display=display, spooled=True)
        src._spooled_bytes = copied
        return src

    def close(self) -> None:
        if isinstance(self._mm, mmap.mmap):
            self._mm.close()
        if self._fh:
            self._fh.close()
        self._mm = None
        if self.spooled:
            own(self.path, mine=False)
            spool_budget.give_back(self._spooled_bytes)
            self._spooled_bytes = 0
            try:
                os.unlink(self.path)
            except OSError:
                pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- bytes --------------------------------------------------------------------------------
    @property
    def data(self) -> mmap.mmap | bytes:
        if self._mm is None:
            if self.size == 0:
                self._mm = b""
            else:
                try:
                    self._fh = open_file(self.path)
                except OSError as e:
                    raise UsageError(f"cannot read {self.display}: {e.strerror}") from None
                self._mm = mmap.mmap(self._fh.fileno(), 0, access=mmap.ACCESS_READ)
        return self._mm

    # -- lines --------------------------------------------------------------------------------
    @property
    def offsets(self) -> LineOffsets:
        """Start offset of every line (1-based line n starts at offsets[n-1]); sampled, so
        memory does not grow by 8 bytes a line (rlm.corpus.line_offsets)."""
        if self._offsets is None:
            if self.size:
                self.data  # noqa: B018 -- same errors as before for unreadable files
            # plain reads, not the mmap: touching every page would make the file resident
            with open_file(self.path) as fh:
                self._offsets = LineOffsets.scan(self._blocks(fh), self.size, lambda: self.data)
        return self._offsets

    @property
    def needs_offsets(self) -> bool:
        return self._offsets is None

    def set_offsets(self, offsets: LineOffsets) -> None:
        """The line index built by a pass that read the whole file anyway (the probe)."""
        self._offsets = offsets

    def _blocks(self, fh):
        step, base = 1 << 22, 0
        while block := fh.read(step):
            checkpoint(base, self.size)  # Ctrl-C and progress every 4 MB
            yield block
            base += len(block)

    @property
    def line_count(self) -> int:
        return len(self.offsets)

    def line_span(self, start: int, end: int) -> tuple[int, int]:
        """Byte range [a, b) of lines start..end (1-based, inclusive), newline excluded at the end."""
        offs = self.offsets
        a = offs[start - 1]
        b = offs[end] if end < len(offs) else self.size
        if b > a and self.data[b - 1 : b] == b"\n":
            b -= 1
        return a, b

    def lines(self, start: int, end: int, max_chars: int | None = None) -> list[str]:
        """Decoded lines start..end (inclusive, clamped to the file). Long lines are cut at
        max_chars characters (the caller declares the cut)."""
        n = self.line_count
        start, end = max(1, start), min(end, n)
        if start > end:
            return []
        a, b = self.line_span(start, end)
        text = bytes(self.data[a:b]).decode("utf-8", errors="replace")
        out = text.split("\n")
        out = [s[:-1] if s.endswith("\r") else s for s in out]
        if max_chars is not None:
            out = [s if len(s) <= max_chars else s[:max_chars] for s in out]
        return out

    def sampled_lines(self, n: int, count: int, max_chars: int = 400) -> list[str] | None:
        """Up to `count` lines from line n, by one plain read at the line's indexed start, or
        None when line n's start is not kept by the sampled index (rlm.corpus.line_offsets).
        For samples spread over a big file: a read through the mmap would leave its pages
        (and the kernel's read-around) resident, 300 MB of a 500 MB log for 4,096 samples."""
        off = self.offsets.known(n - 1)
        if off is None:
            return None
        self.data  # noqa: B018 -- opens the file (and its handle) once, as every reader does
        raw = os.pread(self._fh.fileno(), min(self.size - off, count * (max_chars + 1) + 4096),
                       off)  # one positioned read on the open handle, no open per sample
        out = raw.decode("utf-8", errors="replace").split("\n")
        if off + len(raw) >= self.size and out and out[-1] == "":
            out.pop()  # the file's last newline ends the last line
        # a line cut by the read keeps its start (where a time is), cut like max_chars
        return [(x[:-1] if x.endswith("\r") else x)[:max_chars] for x in out[:count]]

    def line(self, n: int, max_chars: int | None = None) -> str:
        got = self.lines(n, n, max_chars)
        return got[0] if got else ""

    # -- as a chunk's lines (rlm.corpus.chunk.Lines) ------------------------------------------
    headed = False  # one file: the material needs no "### path" header
    # the whole corpus is this one file (set by open_corpus): prompts then name it by its name,
    # not by how the path was spelled; a folder's files keep their folder-relative names
    single_file = False

    def part_bytes(self, p) -> tuple[int, int]:
        """Byte range of a chunk part: its lines with their newlines, or its piece."""
        if p.piece is not None:
            return p.piece
        offs = self.offsets
        return offs[p.start - 1], (offs[p.end] if p.end < len(offs) else self.size)

    def part_lines(self, p) -> list[str]:
        if p.piece is not None:
            a, b = p.piece
            return [bytes(self.data[a:b]).decode("utf-8", "replace")]
        return self.lines(p.start, p.end)

    def total_lines(self, path: str) -> int:
        return self.line_count

    def line_of_offset(self, off: int) -> int:
        """1-based line number containing byte offset `off`."""
        return self.offsets.bisect_right(off)


def _interruptible_reader(stream):
    """Blocks of 1 MB from `stream`. A pipe or terminal is waited on in 0.25 s steps, so that
    Ctrl-C (checkpoint) stops a read from a pipe that has nothing to say yet."""
    import select
    import stat

    try:
        fd = stream.fileno()
        waitable = not stat.S_ISREG(os.fstat(fd).st_mode)
    except (AttributeError, OSError, ValueError):
        waitable = False
    if not waitable:
        return lambda: stream.read(1 << 20)

    def read() -> bytes:
        while not select.select([fd], [], [], 0.25)[0]:
            checkpoint()
        return os.read(fd, 1 << 20)  # what is there now (nothing was read through the buffer)
    return read
