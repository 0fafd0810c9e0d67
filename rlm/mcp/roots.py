"""Where the MCP server may read: the roots it was started with plus the roots the client declares.

A path is checked before anything opens it: it is made absolute (a relative path is taken from
the first root), every symlink in it is resolved, and the result must lie under one resolved
root. A path outside is refused with a message naming the allowed roots; a path that is inside
only until its symlinks are followed is refused as an escaping symlink. This check names the
allowed roots; what keeps a path swapped after it from being read is the opening itself: the
tools open every file beneath the roots (rlm.corpus.beneath).
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import unquote, urlparse

from rlm.errors import PathRefused, UsageError

__all__ = ["PathRefused", "Roots"]


def _real(p: str | Path) -> Path:
    return Path(os.path.realpath(os.path.expanduser(str(p))))


def _under(p: Path, root: Path) -> bool:
    return p == root or root in p.parents


class Roots:
    """The allowed roots: fixed ones (--root, default the working directory) and client ones."""

    def __init__(self, roots: list[str] | None = None):
        given = roots or [os.getcwd()]
        self.fixed: list[Path] = []
        # the roots as written (before symlinks are resolved), to tell an escaping symlink apart
        self._written = [Path(os.path.normpath(os.path.abspath(os.path.expanduser(r))))
                         for r in given]
        for r in given:
            rp = _real(r)
            if not rp.is_dir():
                raise UsageError(f"--root {r}: not a folder")
            if rp not in self.fixed:
                self.fixed.append(rp)
        self.client: list[Path] = []

    @property
    def all(self) -> list[Path]:
        return self.fixed + [c for c in self.client if c not in self.fixed]

    def describe(self) -> str:
        return ", ".join(str(r) for r in self.all)

    def with_client(self, uris: list[str]) -> tuple["Roots", list[str]]:
        """A copy that also allows the client's declared roots (this server's stay as they are:
        roots are per client); plus notes on the roots that were ignored."""
        view = Roots.__new__(Roots)
        view.fixed, view._written, view.client = self.fixed, self._written, []
        return view, view.set_client_roots(uris)

    def set_client_roots(self, uris: list[str]) -> list[str]:
        """Take the client's declared roots (file:// URIs); returns notes on those ignored."""
        notes: list[str] = []
        roots: list[Path] = []
        for uri in uris:
            u = urlparse(uri)
            if u.scheme != "file" or u.netloc not in ("", "localhost"):
                notes.append(f"client root {uri} ignored: only local file:// roots are read")
                continue
            rp = _real(unquote(u.path))
            if rp.is_dir():
                roots.append(rp)
            else:
                notes.append(f"client root {uri} ignored: not a folder here")
        self.client = roots
        return notes

    def resolve(self, path: str, what: str = "path") -> Path:
        """The real path of `path` if it lies under a root; PathRefused otherwise. Never opens it."""
        if not path or not path.strip():
            raise UsageError(f"{what} is empty")
        if "\x00" in path:
            raise PathRefused(f"{what} contains a NUL byte")
        raw = Path(os.path.expanduser(path.strip()))
        literal = raw if raw.is_absolute() else self.all[0] / raw
        literal = Path(os.path.normpath(literal))
        real = _real(literal)
        if any(_under(real, r) for r in self.all):
            if not real.exists():
                raise UsageError(f"{path}: no such file or folder")
            return real
        if any(_under(literal, r) for r in self.all + self._written):
            raise PathRefused(f"{path} is or passes through a symlink that leads outside the "
                              f"allowed roots ({self.describe()}); it was not read")
        raise PathRefused(f"{path} is outside the allowed roots ({self.describe()}); it was not "
                          "read. Start `rlm mcp` with --root DIR, or declare the folder as a root "
                          "in the client")
