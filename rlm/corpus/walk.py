"""The repository walker: which files of a repository a developer would call "the code".

- Inside a git work tree the file list comes from ``git ls-files -co --exclude-standard -z``
  (tracked plus untracked-but-not-ignored files), exactly what git itself considers the tree.
  Outside one (or when git is missing or fails) the folder is walked honouring ``.gitignore``
  files at every level (and ``.git/info/exclude``) with ``pathspec``.
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
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import pathspec

from rlm.corpus.binary import SNIFF_BYTES, is_binary

__all__ = [
    "FileEntry",
    "Skipped",
    "WalkResult",
    "is_binary",
    "walk",
]

LARGE_FILE_BYTES = 20 * 1024 * 1024

# Folders skipped wholesale (when not already ignored by .gitignore), with the reason reported.
VENDORED_DIRS = frozenset({
    "node_modules", "bower_components", "jspm_packages", "vendor", "third_party",
    ".venv", "venv",
})
GENERATED_DIRS = frozenset({
    "dist", "build", "target", "__pycache__", ".tox", ".nox", ".mypy_cache", ".pytest_cache",
    ".ruff_cache", ".eggs", ".next", ".nuxt", ".gradle", "htmlcov",
})
GENERATED_DIR_GLOBS = ("*.egg-info",)
# Version-control metadata: not part of the corpus at all (neither listed nor skipped).
VCS_NAMES = frozenset({".git", ".hg", ".svn"})

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


@dataclass(frozen=True)
class Skipped:
    """Something listed but not kept. ``path`` ends with "/" for a folder; ``files`` is how many
    listed files the entry stands for (1 for a file, the count inside for a folder)."""

    path: str
    reason: str
    files: int = 1


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
            kind = s.reason.split(":", 1)[0]
            out[kind] = out.get(kind, 0) + s.files
        return dict(sorted(out.items()))


# ------------------------------------------------------------------------------ listing


def _git_env() -> dict[str, str]:
    """The environment without variables that would point git at another repository."""
    env = dict(os.environ)
    for k in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
              "GIT_COMMON_DIR", "GIT_NAMESPACE"):
        env.pop(k, None)
    env["GIT_OPTIONAL_LOCKS"] = "0"
    return env


def _git(root: Path, *args: str) -> bytes | None:
    try:
        proc = subprocess.run(
            ["git", *args], cwd=root, env=_git_env(), capture_output=True, timeout=120,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout if proc.returncode == 0 else None


def _split_z(out: bytes) -> list[str]:
    return [os.fsdecode(p) for p in out.split(b"\0") if p]


def _git_listing(root: Path) -> tuple[list[str], int] | None:
    """(listed paths, ignored count) from git, or None when root is not in a git work tree or
    git is missing or fails."""
    inside = _git(root, "rev-parse", "--is-inside-work-tree")
    if inside is None or inside.strip() != b"true":
        return None
    listed = _git(root, "ls-files", "-co", "--exclude-standard", "-z")
    if listed is None:
        return None
    ignored = _git(root, "ls-files", "-o", "-i", "--exclude-standard", "-z")
    paths = sorted(set(_split_z(listed)))
    return paths, len(_split_z(ignored)) if ignored is not None else 0


class _IgnoreRules:
    """.gitignore files found while walking: each applies below its own folder, and a deeper
    file's decision overrides a shallower one's (git's precedence); within one file the last
    matching pattern wins, "!" re-includes."""

    def __init__(self) -> None:
        self._specs: dict[str, list] = {}  # folder rel path ("" for root) -> compiled patterns

    def load(self, rel_dir: str, lines: Iterable[str]) -> None:
        lines = list(lines)
        if not any(s.strip() and not s.lstrip().startswith("#") for s in lines):
            return
        spec = pathspec.GitIgnoreSpec.from_lines(lines)
        self._specs.setdefault(rel_dir, []).extend(spec.patterns)

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """rel: posix path from the root. Folders are matched with a trailing slash."""
        parts = rel.split("/")
        decision = False
        for depth in range(len(parts)):  # spec folders from the root down to the parent
            base = "/".join(parts[:depth])
            patterns = self._specs.get(base)
            if not patterns:
                continue
            sub = "/".join(parts[depth:]) + ("/" if is_dir else "")
            for pat in patterns:
                if pat.include is None:
                    continue
                if pat.match_file(sub) is not None:
                    decision = bool(pat.include)
        return decision


def _read_ignore_file(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


def _count_files(path: Path) -> int:
    """Files below a folder (symlinks count as entries, never followed)."""
    n = 0
    for _dirpath, dirnames, filenames in os.walk(path, followlinks=False, onerror=lambda e: None):
        dirnames[:] = [d for d in dirnames if d not in VCS_NAMES]
        n += len(filenames)
        # symlinked folders are listed in dirnames but not entered: count them as entries
        n += sum(1 for d in dirnames if os.path.islink(os.path.join(_dirpath, d)))
    return n


def _fs_listing(root: Path, result: WalkResult) -> list[str]:
    """Walk the folder honouring .gitignore files; returns the listed file paths (symlinks and
    other non-folder entries included: they are classified later). Folders skipped wholesale
    are added to result.skipped here, ignored files counted in result.ignored_count."""
    rules = _IgnoreRules()
    exclude = root / ".git" / "info" / "exclude"
    if exclude.is_file():
        rules.load("", _read_ignore_file(exclude))
    listed: list[str] = []

    def visit(abs_dir: Path, rel_dir: str) -> None:
        gi = abs_dir / ".gitignore"
        if gi.is_file() and not gi.is_symlink():
            rules.load(rel_dir, _read_ignore_file(gi))
        try:
            with os.scandir(abs_dir) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as e:
            result.skipped.append(Skipped(f"{rel_dir}/" if rel_dir else "./",
                                          f"unreadable: {e.strerror or e}", 0))
            return
        for entry in entries:
            if entry.name in VCS_NAMES:
                continue
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                real_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                real_dir = False
            if real_dir:
                if rules.ignored(rel, True):
                    result.ignored_count += _count_files(Path(entry.path))
                    continue
                reason = _skip_dir_reason(entry.name)
                if reason:
                    n = _count_files(Path(entry.path))
                    result.skipped.append(Skipped(rel + "/", f"{reason}: {n} files", n))
                    continue
                visit(Path(entry.path), rel)
            else:
                if rules.ignored(rel, False):
                    result.ignored_count += 1
                    continue
                listed.append(rel)

    visit(root, "")
    return listed


def _skip_dir_reason(name: str) -> str | None:
    if name in VENDORED_DIRS:
        return "vendored"
    if name in GENERATED_DIRS or any(fnmatch.fnmatchcase(name, g) for g in GENERATED_DIR_GLOBS):
        return "generated"
    return None


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
        n = _count_files(abs_path)
        result.skipped.append(Skipped(rel + "/", f"submodule: {n} files", n))
        return
    if not stat.S_ISREG(st.st_mode):
        result.skipped.append(Skipped(rel, "not a regular file"))
        return
    if name in LOCK_FILES:
        result.skipped.append(Skipped(rel, "lockfile"))
        return
    if _matches(name, MINIFIED_GLOBS):
        result.skipped.append(Skipped(rel, "minified"))
        return
    if _matches(name, GENERATED_GLOBS):
        result.skipped.append(Skipped(rel, "generated"))
        return
    try:
        with open(abs_path, "rb") as fh:
            head = fh.read(SNIFF_BYTES)
            if is_binary(head):
                result.skipped.append(Skipped(rel, "binary"))
                return
            lines = _count_lines(fh, head, st.st_size)
    except OSError as e:
        result.skipped.append(Skipped(rel, f"unreadable: {e.strerror or e}"))
        return
    if name.lower().endswith(MINIFIABLE_EXT) and lines and st.st_size / lines > MINIFIED_AVG_LINE:
        result.skipped.append(Skipped(rel, "minified"))
        return
    if _generated_header(head):
        result.skipped.append(Skipped(rel, "generated"))
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
    result = WalkResult(root=root)

    listing = None
    if use_git is not False:
        listing = _git_listing(root)
        if listing is None and use_git:
            raise ValueError(f"{root}: not inside a git work tree, or git is not available")
        if listing is not None and not listing[0] and use_git is None and _count_files(root):
            result.notes.append("git listed no files here (ignored by an enclosing repository?);"
                                " walked the folder honouring .gitignore instead")
            listing = None

    if listing is not None:
        result.method = "git"
        paths, result.ignored_count = listing
        skipped_dirs: dict[str, tuple[str, int]] = {}
        kept: list[str] = []
        for rel in paths:
            parts = rel.split("/")
            for i, part in enumerate(parts[:-1]):
                reason = _skip_dir_reason(part)
                if reason:
                    key = "/".join(parts[: i + 1]) + "/"
                    r, n = skipped_dirs.get(key, (reason, 0))
                    skipped_dirs[key] = (r, n + 1)
                    break
            else:
                kept.append(rel)
        for key, (reason, n) in skipped_dirs.items():
            result.skipped.append(Skipped(key, f"{reason}: {n} files", n))
    else:
        result.method = "filesystem"
        kept = _fs_listing(root, result)

    for rel in kept:
        _classify(root, rel, result, large_file_bytes)

    result.files.sort(key=lambda f: f.path)
    result.skipped.sort(key=lambda s: s.path)
    result.large.sort()
    return result
