"""Modules of a repository: the walker's kept files grouped by folder structure, not by size
(what `rlm audit` maps and chunks)."""

from __future__ import annotations

from dataclasses import dataclass, field

from rlm.corpus.walk import FileEntry

ROOT_MODULE = "(root)"


@dataclass
class Module:
    """A group of files by folder: ``name`` is the folder path ("(root)" for top-level files)."""

    name: str
    files: list[FileEntry] = field(default_factory=list)

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files)

    @property
    def lines(self) -> int:
        return sum(f.lines for f in self.files)


# Container folders that are looked through: src/<pkg> is a module, not src.
LOOK_THROUGH = frozenset({"src", "packages", "crates"})


def _module_of(path: str) -> str:
    parts = path.split("/")
    if len(parts) == 1:
        return ROOT_MODULE
    if parts[0] in LOOK_THROUGH and len(parts) >= 3:
        return f"{parts[0]}/{parts[1]}"
    return parts[0]


def _split(name: str, files: list[FileEntry], max_files: int | None) -> list[Module]:
    """Split a folder module with more than max_files files per subfolder (recursively); files
    directly in the folder stay in a module with the folder's name. A folder without
    subfolders is not split (splitting by files is the chunker's job)."""
    if max_files is None or len(files) <= max_files or name == ROOT_MODULE:
        return [Module(name, files)]
    depth = len(name.split("/"))
    direct: list[FileEntry] = []
    subs: dict[str, list[FileEntry]] = {}
    for f in files:
        parts = f.path.split("/")
        if len(parts) == depth + 1:
            direct.append(f)
        else:
            subs.setdefault(parts[depth], []).append(f)
    if not subs:
        return [Module(name, files)]
    out: list[Module] = [Module(name, direct)] if direct else []
    for sub in sorted(subs):
        out.extend(_split(f"{name}/{sub}", subs[sub], max_files))
    return out


def group_modules(files: list[FileEntry], max_files: int | None = None) -> list[Module]:
    """Group files into modules by folder structure (never by size):

    - top-level files → module "(root)";
    - each top-level folder → one module named after it (a Python package is one module);
    - container folders ``src/``, ``packages/``, ``crates/`` are looked through: ``src/<pkg>``
      is a module (files directly in ``src/`` form module "src");
    - with ``max_files``, a folder module holding more files is split per subfolder,
      recursively ("pkg" keeps its direct files; "pkg/sub" gets the rest).

    Modules come "(root)" first, then sorted by name; files inside are sorted by path.
    """
    by_module: dict[str, list[FileEntry]] = {}
    for f in sorted(files, key=lambda f: f.path):
        by_module.setdefault(_module_of(f.path), []).append(f)
    modules: list[Module] = []
    for name in sorted(by_module, key=lambda n: (n != ROOT_MODULE, n)):
        modules.extend(_split(name, by_module[name], max_files))
    return modules
