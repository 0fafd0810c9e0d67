"""The repository walker: which files of a repository a developer would call "the code".

- The paths come from :mod:`rlm.corpus.listing`: ``git ls-files`` inside a git work tree,
  else a walk honouring ``.gitignore`` files (``pathspec``).
- Ignored files are not listed and not reported one by one; only their number is kept
  (``WalkResult.ignored_count``).
- Of the listed files, code skips and *reports* (``WalkResult.skipped``, with a reason) what a
  model should not read: vendored and generated folders (one entry per folder, with the number
  of files inside), binaries, minified files, lock files, generated files, symlinks, files it
  cannot read. Large files are kept; they are only named in ``WalkResult.large``.
- Every listed file is either in ``files`` or counted in ``skipped`` (``Skipped.files``), so
  coverage can add up to the number of files.
- Symlinks are never followed (a symlink is reported as skipped, never read), so nothing
  outside the root is ever read. Order is deterministic (sorted posix paths).

:func:`rlm.corpus.modules.group_modules` then groups the kept files into modules by folder.
"""

from __future__ import annotations

import fnmatch
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from rlm.corpus.binary import SNIFF_BYTES, is_binary
from rlm.corpus.beneath import open_file
from rlm.corpus.listing import Skipped, count_files, list_paths

__all__ = [
    "FileEntry",
    "Skipped",
    "WalkResult",
    "is_binary",
    "walk",
]

LARGE_FILE_BYTES = 20 * 1024 * 1024

LOCK_FILES = frozenset({
    "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "bun.lockb",
    "poetry.lock", "uv.lock", "Pipfile.lock", "pdm.lock", "Cargo.lock", "composer.lock",
    "go.sum", "Gemfile.lock", "Podfile.lock", "mix.lock", "pubspec.lock", "flake.lock",
    "packages.lock.json", "gradle.lockfile",
})
MINIFIED_GLOBS = ("*.min.js", "*.min.css", "*.min.mjs", "*-min.js", "*.bundle.js")
MINIFIABLE_EXT = (".js", ".mjs", ".cjs", ".css")
MINIFIED_AVG_LINE = 1000  # average characters per line above which a .js/.css is minified
GENERATED_GLOBS = (
    "*_pb2.py", "*_pb2.pyi", "*_pb2_grpc.py", "*.pb.go", "*.pb.cc", "*.pb.h",
    "*.generated.*", "*.js.map", "*.css.map",
)
# A generated-file marker in the first lines: "@generated" (Meta/Rust convention), or
# "generated" together with "do not edit" (Go's "Code generated ... DO NOT EDIT.", protoc, ...).
_HEADER_LINES = 5


# ------------------------------------------------------------------------------ data


@dataclass(frozen=True)
class FileEntry:
    """A file kept for reading: posix path relative to the root, bytes, lines (newline
    count, plus one when the last line has no trailing newline; the TextSource convention)."""

    path: str
    size: int
    lines: int


@dataclass
class WalkResult:
    root: Path
    files: list[FileEntry] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    ignored_count: int = 0  # files excluded by .gitignore & co. (not listed, not "skipped")
    method: str = "filesystem"  # "git" (git ls-files) or "filesystem" (.gitignore via pathspec)
    large: list[str] = field(default_factory=list)  # kept files over the large-file threshold
    notes: list[str] = field(default_factory=list)  # e.g. why git was not used

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)

    @property
    def total_lines(self) -> int:
        return sum(f.lines for f in self.files)

    @property
    def skipped_files(self) -> int:
        """How many listed files were skipped (folders count their files)."""
        return sum(s.files for s in self.skipped)

    @property
    def listed_files(self) -> int:
        """Kept plus skipped: every file the listing produced."""
        return len(self.files) + self.skipped_files

    def skipped_by_reason(self) -> dict[str, int]:
        """Files skipped per reason kind ("vendored", "binary", "unreadable", ...)."""
        out: dict[str, int] = {}
        for s in self.skipped:
            out[s.kind] = out.get(s.kind, 0) + s.files
        return dict(sorted(out.items()))


# ------------------------------------------------------------------------------ classifying


def _matches(name: str, globs: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, g) for g in globs)


def _generated_header(head: bytes) -> bool:
    first = b"\n".join(head.split(b"\n", _HEADER_LINES)[:_HEADER_LINES]).lower()
    if b"@generated" in first:
        return True
    return b"generated" in first and (b"do not edit" in first or b"do not modify" in first)


def _count_lines(fh, head: bytes, size: int) -> int:
    """Newlines in the whole file (head already read) plus one for an unterminated last line."""
    if size == 0:
        return 0
    n = head.count(b"\n")
    last = head[-1:]
    while True:
        block = fh.read(1 << 20)
        if not block:
            break
        n += block.count(b"\n")
        last = block[-1:]
    if last and last != b"\n":
        n += 1  # an unterminated last line still counts
    return n


def _classify(root: Path, rel: str, result: WalkResult, large_file_bytes: int) -> None:
    """Put one listed path into result.files or result.skipped."""
    abs_path = root / rel
    name = rel.rsplit("/", 1)[-1]
    try:
        st = os.lstat(abs_path)
    except FileNotFoundError:
        return  # listed by git but deleted from the work tree: not part of the corpus
    except OSError as e:
        result.skipped.append(Skipped(rel, f"unreadable: {e.strerror or e}"))
        return
    if stat.S_ISLNK(st.st_mode):
        try:
            target = abs_path.resolve(strict=False)
            inside = target == root or target.is_relative_to(root)
        except (OSError, RuntimeError):
            inside = False
        result.skipped.append(Skipped(rel, "symlink" if inside else "symlink outside root"))
        return
    if stat.S_ISDIR(st.st_mode):  # a gitlink listed by git ls-files
        n = count_files(abs_path)
        result.skipped.append(Skipped(rel + "/", f"submodule: {n} files", n))
        return
    if not stat.S_ISREG(st.st_mode):
        result.skipped.append(Skipped(rel, "not a regular file"))
        return
    if name in LOCK_FILES:
        result.skipped.append(Skipped(rel, "lockfile", bytes=st.st_size))
        return
    if _matches(name, MINIFIED_GLOBS):
        result.skipped.append(Skipped(rel, "minified", bytes=st.st_size))
        return
    if _matches(name, GENERATED_GLOBS):
        result.skipped.append(Skipped(rel, "generated", bytes=st.st_size))
        return
    try:
        with open_file(abs_path) as fh:
            head = fh.read(SNIFF_BYTES)
            if is_binary(head):
                result.skipped.append(Skipped(rel, "binary", bytes=st.st_size))
                return
            lines = _count_lines(fh, head, st.st_size)
    except OSError as e:
        result.skipped.append(Skipped(rel, f"unreadable: {e.strerror or e}"))
        return
    if name.lower().endswith(MINIFIABLE_EXT) and lines and st.st_size / lines > MINIFIED_AVG_LINE:
        result.skipped.append(Skipped(rel, "minified", bytes=st.st_size))
        return
    if _generated_header(head):
        result.skipped.append(Skipped(rel, "generated", bytes=st.st_size))
        return
    result.files.append(FileEntry(rel, st.st_size, lines))
    if st.st_size > large_file_bytes:
        result.large.append(rel)


def walk(root: Path, *, use_git: bool | None = None,
         large_file_bytes: int = LARGE_FILE_BYTES) -> WalkResult:
    """List the repository's files (see the module docstring for the rules).

    use_git: None (default) uses git when ``root`` is inside a git work tree and falls back to
    the .gitignore-aware walk otherwise; False forces the walk; True requires git (ValueError
    when it cannot be used). If git lists nothing while the folder does hold files (e.g. the
    folder is ignored by an enclosing repository, like a copy under .venv), the walk is used
    instead and a note says so.
    Raises NotADirectoryError / FileNotFoundError for a root that is not an existing folder.
    """
    root = Path(root)
    if not root.exists():
        raise FileNotFoundError(f"no such folder: {root}")
    if not root.is_dir():
        raise NotADirectoryError(f"not a folder: {root}")
    root = root.resolve()
    listing = list_paths(root, use_git)
    result = WalkResult(root=root, skipped=listing.skipped, ignored_count=listing.ignored_count,
                        method=listing.method, notes=listing.notes)
    for rel in listing.paths:
        _classify(root, rel, result, large_file_bytes)
    result.files.sort(key=lambda f: f.path)
    result.skipped.sort(key=lambda s: s.path)
    result.large.sort()
    return result
