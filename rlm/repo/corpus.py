"""A repository as the walker lists it, and the file coverage partition of audit and mine:
every listed file read by the model, only scanned by code, failed, or skipped (with the reason),
adding up to the walker's count."""

from __future__ import annotations

from pathlib import Path

from rlm.corpus.walk import WalkResult, walk
from rlm.errors import UsageError
from rlm.repo.files import doc_lines, file_lines, is_doc_file
from rlm.schemas.report import CorpusInfo
from rlm.schemas.repo_report import FileCoverage


class RepoCorpus:
    """A repository as the walker lists it, with lazy, cached access to its files' lines."""

    def __init__(self, path_arg: str):
        p = Path(path_arg)
        if not p.exists():
            raise UsageError(f"{path_arg}: no such folder")
        if not p.is_dir():
            raise UsageError(f"{path_arg}: not a folder (audit and mine take a repository folder)")
        self.display = path_arg
        self.root = p.resolve()
        self.walk: WalkResult = walk(self.root)
        self.files = list(self.walk.files)
        self.by_path = {f.path: f for f in self.files}
        self.unreadable: dict[str, str] = {}
        self._doc_lines: dict[str, set[int]] = {}
        if not self.files:
            raise UsageError(f"{path_arg}: no readable files (the walker listed "
                             f"{self.walk.listed_files}, skipped {self.walk.skipped_files})")

    def lines(self, rel: str) -> tuple[str, ...]:
        try:
            return file_lines(self.root, rel)
        except (OSError, ValueError) as e:  # vanished or unreadable since the walk
            self.unreadable.setdefault(rel, f"unreadable: {getattr(e, 'strerror', None) or e}")
            return ()

    def is_empty(self, rel: str) -> bool:
        return not self.lines(rel)

    def doc_lines(self, rel: str) -> set[int]:
        if rel not in self._doc_lines:
            self._doc_lines[rel] = doc_lines(rel, self.lines(rel))
        return self._doc_lines[rel]

    def basis(self, rel: str, a: int, b: int) -> str:
        """"docs" when the lines are documentation (a doc file, comments, docstrings)."""
        if is_doc_file(rel):
            return "docs"
        dl = self.doc_lines(rel)
        ls = self.lines(rel)
        rng = [n for n in range(a, b + 1) if n <= len(ls) and ls[n - 1].strip()]
        if rng and all(n in dl for n in rng):
            return "docs"
        return "code"

    def corpus_info(self) -> CorpusInfo:
        return CorpusInfo(path=self.display, bytes=self.walk.total_bytes,
                          lines=self.walk.total_lines, files=len(self.files), kind="repository")

    def file_coverage(self, read: set[str], failed: set[str]) -> FileCoverage:
        return file_coverage(self, read, failed)


def file_coverage(c: RepoCorpus, read: set[str], failed: set[str]) -> FileCoverage:
    """Partition every listed file: read / scanned only / failed / skipped (with reason)."""
    fc = FileCoverage(total=c.walk.listed_files, method=c.walk.method,
                      ignored_by_gitignore=c.walk.ignored_count)
    fc.sizes = {s.path: s.bytes for s in c.walk.skipped if s.bytes is not None}
    fc.sizes.update((f.path, f.size) for f in c.files)
    by_reason = dict(c.walk.skipped_by_reason())
    skipped_files = [{"path": s.path, "reason": s.reason, "files": s.files,
                      "incomplete": s.incomplete}
                     for s in c.walk.skipped]
    for f in c.files:
        if f.path in c.unreadable and f.path not in read:
            reason = c.unreadable[f.path]
            kind = reason.split(":", 1)[0]
            by_reason[kind] = by_reason.get(kind, 0) + 1
            skipped_files.append({"path": f.path, "reason": reason, "files": 1,
                                  "incomplete": True})
        elif not c.lines(f.path):
            by_reason["empty"] = by_reason.get("empty", 0) + 1
            skipped_files.append({"path": f.path, "reason": "empty: nothing to read", "files": 1,
                                  "incomplete": False})
        elif f.path in read:
            fc.read_by_model += 1
            fc.read_files.append(f.path)
        elif f.path in failed:
            fc.failed += 1
            fc.failed_files.append(f.path)
        else:
            fc.scanned_by_code += 1
            fc.scanned_only.append(f.path)
    fc.skipped = sum(by_reason.values())
    fc.skipped_by_reason = dict(sorted(by_reason.items()))
    fc.skipped_files = sorted(skipped_files, key=lambda x: x["path"])
    fc.adds_up = fc.read_by_model + fc.scanned_by_code + fc.failed + fc.skipped == fc.total
    return fc


def files_statement(fc: FileCoverage) -> str:
    why = ", ".join(f"{k} {v}" for k, v in fc.skipped_by_reason.items())
    s = (f"Files: {fc.total} listed by the walker ({fc.method}) = {fc.read_by_model} read by the "
         f"model + {fc.scanned_by_code} only scanned by code + {fc.failed} failed + "
         f"{fc.skipped} skipped" + (f" ({why})" if why else "") + ".")
    if not fc.adds_up:
        s += " (The counts do NOT add up: a bug, please report it.)"
    if fc.ignored_by_gitignore:
        s += f" {fc.ignored_by_gitignore} more files are ignored by .gitignore and not listed."
    return s
