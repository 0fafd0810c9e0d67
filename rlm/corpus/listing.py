"""Which paths a repository folder lists, before the walker classifies them.

Inside a git work tree: ``git ls-files -co --exclude-standard -z`` (what git itself considers
the tree). Outside one (or when git is missing or fails): the folder walked honouring
``.gitignore`` files at every level and ``.git/info/exclude`` (``pathspec``). Vendored and
generated folders are skipped wholesale here (one :class:`Skipped` entry per folder, with the
number of files inside); ignored files are only counted. Symlinks are never followed.
"""

from __future__ import annotations

import fnmatch
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import pathspec

from rlm.corpus.beneath import read_text, scan_folder

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


@dataclass(frozen=True)
class Skipped:
    """Something listed but not kept. ``path`` ends with "/" for a folder; ``files`` is how many
    listed files the entry stands for (1 for a file, the count inside for a folder)."""

    path: str
    reason: str  # "kind" or "kind: detail", e.g. "vendored: 12 files", "unreadable: ..."
    files: int = 1
    bytes: int | None = None  # its size when the walker measured it (a file it looked at)

    @property
    def kind(self) -> str:
        """vendored, generated, binary, unreadable, symlink, ... (the walker's own words)."""
        return self.reason.split(":", 1)[0]

    @property
    def incomplete(self) -> bool:
        """Text that should have been read and could not be: coverage is not complete."""
        return self.kind == "unreadable"


@dataclass
class Listing:
    """What the listing produced: the paths to classify, the folders skipped wholesale, how
    many files .gitignore & co. excluded, and how the list was made."""

    paths: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    ignored_count: int = 0
    method: str = "filesystem"  # "git" (git ls-files) or "filesystem" (.gitignore via pathspec)
    notes: list[str] = field(default_factory=list)


def list_paths(root: Path, use_git: bool | None = None) -> Listing:
    """The listed paths of ``root`` (an existing, resolved folder); see walk() for use_git."""
    out = Listing()
    listing = None
    if use_git is not False:
        listing = _git_listing(root)
        if listing is None and use_git:
            raise ValueError(f"{root}: not inside a git work tree, or git is not available")
        if listing is not None and not listing[0] and use_git is None and count_files(root):
            out.notes.append("git listed no files here (ignored by an enclosing repository?);"
                             " walked the folder honouring .gitignore instead")
            listing = None
    if listing is None:
        out.paths = _fs_listing(root, out)
        return out
    out.method = "git"
    paths, out.ignored_count = listing
    skipped_dirs: dict[str, tuple[str, int]] = {}
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
            out.paths.append(rel)
    for key, (reason, n) in skipped_dirs.items():
        out.skipped.append(Skipped(key, f"{reason}: {n} files", n))
    return out


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
        return read_text(path).splitlines()
    except OSError:
        return []


def _is_plain_file(path: Path) -> bool:
    """A regular file, not a symlink; False when it cannot even be looked at (an unreadable
    folder: the folder itself is then skipped and named by the walk, never an abort)."""
    try:
        return path.is_file() and not path.is_symlink()
    except OSError:
        return False


def count_files(path: Path) -> int:
    """Files below a folder (symlinks count as entries, never followed)."""
    n = 0
    for _dirpath, dirnames, filenames in os.walk(path, followlinks=False, onerror=lambda e: None):
        dirnames[:] = [d for d in dirnames if d not in VCS_NAMES]
        n += len(filenames)
        # symlinked folders are listed in dirnames but not entered: count them as entries
        n += sum(1 for d in dirnames if os.path.islink(os.path.join(_dirpath, d)))
    return n


def _fs_listing(root: Path, result: Listing) -> list[str]:
    """Walk the folder honouring .gitignore files; returns the listed file paths (symlinks and
    other non-folder entries included: they are classified later). Folders skipped wholesale
    are added to result.skipped, ignored files counted in result.ignored_count."""
    rules = _IgnoreRules()
    exclude = root / ".git" / "info" / "exclude"
    if _is_plain_file(exclude):
        rules.load("", _read_ignore_file(exclude))
    listed: list[str] = []

    def visit(abs_dir: Path, rel_dir: str) -> None:
        gi = abs_dir / ".gitignore"
        if _is_plain_file(gi):
            rules.load(rel_dir, _read_ignore_file(gi))
        try:
            with scan_folder(abs_dir) as it:
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
                    result.ignored_count += count_files(abs_dir / entry.name)
                    continue
                reason = _skip_dir_reason(entry.name)
                if reason:
                    n = count_files(abs_dir / entry.name)
                    result.skipped.append(Skipped(rel + "/", f"{reason}: {n} files", n))
                    continue
                visit(abs_dir / entry.name, rel)
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
