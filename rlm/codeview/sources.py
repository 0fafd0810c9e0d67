"""The repository's Python files, read once and parsed once for every view: module names from
the package folders (a folder with ``__init__.py``), text through the one safe line reader."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from rlm.repo.files import file_lines, is_test_file


@dataclass
class Sources:
    root: Path
    files: list[str]  # relative POSIX paths of the kept .py files
    unparsed: dict[str, str] = field(default_factory=dict)  # path -> reason
    _trees: dict[str, ast.Module | None] = field(default_factory=dict)
    _lines: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def _read(self, rel: str) -> tuple[str, ...]:
        if rel not in self._lines:  # resolved beneath the root once per file, not per view
            self._lines[rel] = file_lines(self.root, rel)
        return self._lines[rel]

    def text(self, rel: str) -> str:
        return "\n".join(self._read(rel))

    def lines(self, rel: str) -> int:
        return len(self._read(rel))

    def tree(self, rel: str) -> ast.Module | None:
        if rel not in self._trees:
            try:
                self._trees[rel] = ast.parse(self.text(rel), filename=rel)
            except (SyntaxError, ValueError, OSError) as e:
                self._trees[rel] = None
                self.unparsed[rel] = f"{type(e).__name__}: {e}"[:200]
        return self._trees[rel]

    @cached_property
    def package_dirs(self) -> set[str]:
        return {f.rsplit("/", 1)[0] if "/" in f else "" for f in self.files
                if f.rsplit("/", 1)[-1] == "__init__.py"}

    @cached_property
    def module_of(self) -> dict[str, str]:
        """path -> dotted module name; a name two files would share keeps the path instead."""
        out: dict[str, str] = {}
        seen: dict[str, str] = {}
        for rel in self.files:
            name = self._dotted(rel)
            out[rel] = name if name not in seen else rel
            seen.setdefault(name, rel)
        return out

    @cached_property
    def path_of(self) -> dict[str, str]:
        return {m: p for p, m in self.module_of.items()}

    @cached_property
    def top_names(self) -> set[str]:
        return {m.split(".")[0] for m in self.path_of if "/" not in m}

    def _dotted(self, rel: str) -> str:
        parts = rel[:-3].split("/")
        if parts[-1] == "__init__":
            parts = parts[:-1]
        dirs = rel.split("/")[:-1]
        start = len(dirs)  # the first folder of the unbroken chain of packages above the file
        while start > 0 and "/".join(dirs[:start]) in self.package_dirs:
            start -= 1
        if start == 0 and "" in self.package_dirs:  # the root is a package itself (an
            return ".".join([self.root.name, *parts])  # installed one): its name leads
        return ".".join(parts[start:]) or rel

    def is_test(self, rel: str) -> bool:
        return is_test_file(rel) or rel.rsplit("/", 1)[-1] == "conftest.py"

    def is_package(self, rel: str) -> bool:
        return rel.rsplit("/", 1)[-1] == "__init__.py"
