"""Chunks of the repository recipes: a module (a folder, see
:func:`rlm.corpus.modules.group_modules`) that fits one call is one chunk; a module too large is
split by files (whole files packed in order); a file too large is split by :mod:`rlm.repo.split`.

A chunk is the one chunk type (:class:`rlm.corpus.chunk.Chunk`: an id and parts over several
files); its text, rendered when a call needs it, carries the file path and the original 1-based
line numbers, so a model can cite ``path:start-end`` and code can check it (:mod:`rlm.verify.evidence`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable, Sequence

from rlm.corpus.chunk import REPO_NUMBER_WIDTH, Chunk, Part
from rlm.corpus.lines import numbered_cost
from rlm.corpus.modules import Module
from rlm.corpus.walk import FileEntry
from rlm.repo.files import file_lines
from rlm.repo.split import split_file


class RepoLines:
    """A repository's files as the lines of chunks (rlm.corpus.chunk.Lines): read whole,
    cached by rlm.corpus.lines.read_lines; each part is shown under a "### path" header."""

    headed = True

    def __init__(self, lines_of: Callable[[str], Sequence[str]]):
        self.lines_of = lines_of

    def part_lines(self, p: Part) -> list[str]:
        return list(self.lines_of(p.path)[p.start - 1:p.end])

    def part_bytes(self, p: Part) -> tuple[int, int]:
        return 0, sum(len(s.encode("utf-8", "replace")) + 1 for s in self.part_lines(p))

    def total_lines(self, path: str) -> int:
        return len(self.lines_of(path))


def chunk_files(root: Path, module: str, files: Iterable[FileEntry | str], max_chars: int,
                id_prefix: str = "c", start_index: int = 1,
                lines_of=None) -> list[Chunk]:
    """Chunks for some files of one module: whole files packed in order while they fit
    ``max_chars``; a file too big alone is split (see :func:`split_file`), one chunk per piece.
    Empty files are left out (the caller reports them)."""
    root = Path(root)
    lines_of = lines_of or (lambda rel: file_lines(root, rel))
    src = RepoLines(lines_of)
    out: list[Chunk] = []
    pending: list[Part] = []
    pending_cost = 0
    idx = start_index

    def next_id() -> str:
        nonlocal idx
        cid = f"{id_prefix}{idx:04d}"
        idx += 1
        return cid

    def flush() -> None:
        nonlocal pending, pending_cost
        if pending:
            out.append(Chunk(next_id(), tuple(pending), src, module, "whole"))
            pending, pending_cost = [], 0

    for fe in files:
        rel = fe if isinstance(fe, str) else fe.path
        ls = lines_of(rel)
        n = len(ls)
        if n == 0:
            continue
        cost = numbered_cost(ls, 1, n, REPO_NUMBER_WIDTH) + len(rel) + 40
        if cost <= max_chars:
            if pending and pending_cost + cost > max_chars:
                flush()
            pending.append(Part(rel, 1, n))
            pending_cost += cost
            continue
        flush()
        ranges, how = split_file(rel, ls, max(200, max_chars - len(rel) - 40))
        for a, b in ranges:
            out.append(Chunk(next_id(), (Part(rel, a, b),), src, module, how))
    flush()
    return out


def chunk_modules(root: Path, modules: list[Module], max_chars: int,
                  id_prefix: str = "c", lines_of=None) -> list[Chunk]:
    """One chunk per module when it fits; else split by files, and big files by functions."""
    out: list[Chunk] = []
    for m in modules:
        out.extend(chunk_files(root, m.name, m.files, max_chars, id_prefix,
                               start_index=len(out) + 1, lines_of=lines_of))
    return out
