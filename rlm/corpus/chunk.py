"""The one chunk type of every command: what one isolated call is shown.

A chunk is an id plus one or more :class:`Part` (lines start..end of one file; a part may be a
piece of one over-long line, cut by bytes). It holds no text: the text is rendered when a call
needs it, from the chunk's :class:`Lines` (a big file through mmap, or repository files read
whole), through the one numbered-line renderer (:func:`rlm.corpus.lines.number_lines`). So a
fan-out over a 1 GB log keeps 20,000 chunks in a few MB (slots, no text, no hash until asked).

Who cuts chunks: :mod:`rlm.corpus.index` (a file on line boundaries, sized from the window),
:mod:`rlm.repo.chunks` (repository modules, files, and big files on definitions), and
:mod:`rlm.engine.fit` (a chunk too big for the context, split in two).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from rlm.corpus import instructions
from rlm.corpus.lines import MAX_LINE_CHARS, number_lines

REPO_NUMBER_WIDTH = 3  # repository material: "  12| text" under a "### path" header


@dataclass(frozen=True, slots=True)
class Part:
    """Lines start..end (1-based, inclusive) of one file; ``piece`` is the byte range [a, b) of
    a piece of line ``start`` (== end) when that line alone is longer than a chunk."""

    path: str
    start: int
    end: int
    piece: tuple[int, int] | None = None

    @property
    def lines(self) -> int:
        return self.end - self.start + 1

    def ref(self) -> str:
        return f"{self.path}:{self.start}-{self.end}"


class Lines(Protocol):
    """Where a chunk's text comes from: rlm.corpus.source.TextSource (one file, mmap) or
    rlm.repo.chunks.RepoLines (repository files read whole)."""

    headed: bool  # material names each file: "### path (lines a-b of n)" before its lines

    def part_lines(self, p: Part) -> list[str]: ...  # the raw lines (or the piece) p shows

    def part_bytes(self, p: Part) -> tuple[int, int]: ...  # its byte range (or (0, size))

    def total_lines(self, path: str) -> int: ...


@dataclass(slots=True)  # 20,000 chunks in memory at once: keep each small
class Chunk:
    id: str
    parts: tuple[Part, ...]
    source: Lines
    module: str = ""  # the group it belongs to (a repository module); "" for a plain file
    how: str = "whole"  # whole files/lines, or how a big file was cut ("ast", "declarations", ...)

    # -- one part (ask's chunks: one range of one file) -------------------------------------
    @property
    def path(self) -> str:
        return self.parts[0].path

    @property
    def line_start(self) -> int:
        return self.parts[0].start

    @property
    def line_end(self) -> int:
        return self.parts[-1].end

    @property
    def cut(self) -> bool:
        """A piece of one over-long line (cut by bytes)."""
        return self.parts[0].piece is not None

    @property
    def byte_start(self) -> int:
        return self.source.part_bytes(self.parts[0])[0]

    @property
    def byte_end(self) -> int:
        return self.source.part_bytes(self.parts[-1])[1]

    # -- any number of parts ---------------------------------------------------------------
    @property
    def paths(self) -> list[str]:
        return list(dict.fromkeys(p.path for p in self.parts))

    @property
    def lines(self) -> int:
        return sum(p.lines for p in self.parts)

    @property
    def nbytes(self) -> int:
        return sum(b - a for a, b in map(self.source.part_bytes, self.parts))

    def sha(self) -> str:
        """Content hash of what the chunk shows (computed when asked, not kept)."""
        h = hashlib.sha256()
        for p in self.parts:
            h.update("\n".join(self.source.part_lines(p)).encode("utf-8", "replace"))
        return h.hexdigest()[:16]

    def describe(self) -> str:
        if len(self.parts) > 1:
            return (f"module {self.module}: {len(self.paths)} files" if self.module
                    else ", ".join(p.ref() for p in self.parts[:4]))
        p = self.parts[0]
        if self.source.headed:
            return f"{p.path} lines {p.start}-{p.end}"
        # one file: its name, not its spelling (./big.log, big.log and /abs/big.log make the
        # same prompt, so a resume or a re-ask finds its answered calls in the cache); a
        # folder's files are already named relative to the folder, and keep their folders
        name = p.path
        if getattr(self.source, "single_file", False):
            name = os.path.basename(p.path.rstrip("/")) or p.path
        return (f"{name}:{p.start}-{p.end}"
                + (" (piece of an over-long line, cut by bytes)" if p.piece else ""))

    def shows(self, path: str, a: int, b: int, slack: int = 0) -> bool:
        """Whether lines a..b of path overlap what this chunk shows (± slack lines)."""
        return any(p.path == path and a <= p.end + slack and b >= p.start - slack
                   for p in self.parts)

    def cut_lines(self, max_line_chars: int = MAX_LINE_CHARS) -> int:
        """Lines the material shows cut at max_line_chars (marked; declared by the caller)."""
        return sum(len(s) > max_line_chars for p in self.parts if p.piece is None
                   for s in self.source.part_lines(p))

    def withheld(self) -> list[tuple[str, int, str]]:
        """(path, line, why) of the lines that read like instructions to a model: numbered_text
        shows WITHHELD in their place (rlm.corpus.instructions)."""
        return [(p.path, p.start + i, why) for p in self.parts
                for i, why in instructions.flagged(self.source.part_lines(p))]

    def numbered_text(self, max_line_chars: int = MAX_LINE_CHARS) -> str:
        """The material of the call: each line with its 1-based number in its file; a line that
        reads like an instruction to a model is withheld (see `withheld`)."""
        src = self.source
        several = len(self.paths) > 1
        out: list[str] = []
        for p in self.parts:
            ls, hit = instructions.withhold(src.part_lines(p))
            for i in hit:
                instructions.remember(p.path, p.start + i)
            if p.piece is not None:  # a piece is shown whole: it was cut to fit already
                body = number_lines(ls, p.start, max_chars=None)[0]
            elif src.headed:
                body = number_lines(ls, p.start, width=REPO_NUMBER_WIDTH,
                                    max_chars=max_line_chars)[0]
                body = f"### {p.path} (lines {p.start}-{p.end} of {src.total_lines(p.path)})\n{body}"
            else:
                body = number_lines(ls, p.start, max_chars=max_line_chars)[0]
            out.append(f"--- {p.path} ---\n{body}" if several and not src.headed else body)
        return ("\n\n" if src.headed else "\n").join(out)


class ShownLines(Sequence):
    """The lines of one file as one chunk showed them to the model, addressed by file line
    number (index 0 is line 1). Lines outside the chunk read as blank, so evidence can only be
    found in what the call was shown; a piece of an over-long line reads as that piece."""

    def __init__(self, chunk: Chunk, path: str | None = None):
        self.c = chunk
        self.path = chunk.path if path is None else path
        self._shown: dict[int, str] | None = None
        self._n = chunk.source.total_lines(self.path)

    def _lines(self) -> dict[int, str]:
        if self._shown is None:
            self._shown = {}
            for p in self.c.parts:
                if p.path == self.path:
                    self._shown.update(enumerate(self.c.source.part_lines(p), p.start))
        return self._shown

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return self._lines().get(i + 1, "")
