"""Chunks of the repository recipes: a module (a folder, see
:func:`rlm.corpus.modules.group_modules`) that fits one call is one chunk; a module too large is
split by files (whole files packed in order); a file too large is split by :mod:`rlm.repo.split`.

Every chunk's text carries the file path and the original 1-based line numbers, so a model can
cite ``path:start-end`` and code can check it (:mod:`rlm.evidence`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from rlm.corpus.modules import Module
from rlm.corpus.walk import FileEntry
from rlm.repo.files import file_lines, numbered
from rlm.repo.files import numbered_cost as _cost
from rlm.repo.split import split_file


@dataclass(frozen=True)
class Part:
    """Lines start..end (1-based, inclusive) of one file."""

    path: str
    start: int
    end: int

    @property
    def lines(self) -> int:
        return self.end - self.start + 1

    def ref(self) -> str:
        return f"{self.path}:{self.start}-{self.end}"


@dataclass
class RepoChunk:
    """One isolated call's material: whole files or parts of one file, numbered."""

    id: str
    module: str
    parts: list[Part]
    text: str
    how: str = "whole"  # "whole" files, or how a big file was cut ("ast", "declarations", "lines")
    cut_lines: int = 0  # over-long lines shown cut
    nbytes: int = 0
    meta: dict = field(default_factory=dict)

    @property
    def paths(self) -> list[str]:
        return list(dict.fromkeys(p.path for p in self.parts))

    @property
    def lines(self) -> int:
        return sum(p.lines for p in self.parts)

    def describe(self) -> str:
        if len(self.parts) == 1:
            p = self.parts[0]
            return f"{p.path} lines {p.start}-{p.end}"
        return f"module {self.module}: {len(self.parts)} files"

    def shows(self, path: str, a: int, b: int, slack: int = 0) -> bool:
        """Whether lines a..b of path overlap what this chunk shows (± slack lines)."""
        return any(p.path == path and a <= p.end + slack and b >= p.start - slack
                   for p in self.parts)


def _make_chunk(cid: str, module: str, root: Path, parts: list[Part], how: str,
                lines_of) -> RepoChunk:
    texts = []
    cuts = 0
    nbytes = 0
    for p in parts:
        ls = lines_of(p.path)
        t, c = numbered(p.path, ls, p.start, p.end, len(ls))
        texts.append(t)
        cuts += c
        nbytes += sum(len(ls[i - 1].encode("utf-8", "replace")) + 1 for i in range(p.start, p.end + 1))
    return RepoChunk(cid, module, parts, "\n\n".join(texts), how, cuts, nbytes)


def chunk_files(root: Path, module: str, files: Iterable[FileEntry | str], max_chars: int,
                id_prefix: str = "c", start_index: int = 1,
                lines_of=None) -> list[RepoChunk]:
    """Chunks for some files of one module: whole files packed in order while they fit
    ``max_chars``; a file too big alone is split (see :func:`split_file`), one chunk per piece.
    Empty files are left out (the caller reports them)."""
    root = Path(root)
    lines_of = lines_of or (lambda rel: file_lines(root, rel))
    out: list[RepoChunk] = []
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
            out.append(_make_chunk(next_id(), module, root, pending, "whole", lines_of))
            pending, pending_cost = [], 0

    for fe in files:
        rel = fe if isinstance(fe, str) else fe.path
        ls = lines_of(rel)
        n = len(ls)
        if n == 0:
            continue
        cost = _cost(ls, 1, n) + len(rel) + 40
        if cost <= max_chars:
            if pending and pending_cost + cost > max_chars:
                flush()
            pending.append(Part(rel, 1, n))
            pending_cost += cost
            continue
        flush()
        ranges, how = split_file(rel, ls, max(200, max_chars - len(rel) - 40))
        for a, b in ranges:
            out.append(_make_chunk(next_id(), module, root, [Part(rel, a, b)], how, lines_of))
    flush()
    return out


def chunk_modules(root: Path, modules: list[Module], max_chars: int,
                  id_prefix: str = "c", lines_of=None) -> list[RepoChunk]:
    """One chunk per module when it fits; else split by files, and big files by functions."""
    out: list[RepoChunk] = []
    for m in modules:
        out.extend(chunk_files(root, m.name, m.files, max_chars, id_prefix,
                               start_index=len(out) + 1, lines_of=lines_of))
    return out
