"""A folder of logs as one corpus: rotated files in time order, one line numbering.

`app.log.3.gz, app.log.2.gz, app.log.1, app.log` are one log written in that order (a higher
rotation number is older); files of different names are ordered by name. `LogSet` strings the
files together behind one 1-based line numbering, so the profiler counts one template table
across all files and a shared id across files joins one story; `locate` turns a global line
back into (file, line in that file) for every finding.
"""

from __future__ import annotations

import re
from bisect import bisect_right

from rlm.corpus.source import TextSource

_ROTATION = re.compile(r"^(?P<base>.+?)(?:[.-](?P<n>\d{1,4}))?(?P<gz>\.gz)?$")


def rotation_key(name: str) -> tuple[str, int]:
    """(base name, age): `app.log.2.gz` -> ("app.log", 2); `app.log` -> ("app.log", 0).
    Sorting by (base, -age) puts each rotated family oldest first."""
    m = _ROTATION.match(name)
    base, n = (m.group("base"), int(m.group("n") or 0)) if m else (name, 0)
    return base, n


def time_order(sources: list[TextSource]) -> list[TextSource]:
    """Rotated families oldest file first; families and other files by name."""
    return sorted(sources, key=lambda s: (rotation_key(s.display)[0], -rotation_key(s.display)[1],
                                          s.display))


class LogSet:
    """Several TextSources read as one: global 1-based line numbers, per-file locations."""

    def __init__(self, sources: list[TextSource]):
        self.sources = sources
        self.starts: list[int] = []  # global line number of each file's line 1, minus 1
        n = 0
        for s in sources:
            self.starts.append(n)
            n += s.line_count
        self.line_count = n
        self.size = sum(s.size for s in sources)
        self.display = ", ".join(s.display for s in sources[:3]) + (
            f" and {len(sources) - 3} more" if len(sources) > 3 else "")

    def locate(self, n: int) -> tuple[TextSource, int]:
        """(file, its own line number) of global line `n`."""
        i = max(0, bisect_right(self.starts, n - 1) - 1)
        return self.sources[i], n - self.starts[i]

    def file_index(self, n: int) -> int:
        return max(0, bisect_right(self.starts, n - 1) - 1)

    def line(self, n: int, max_chars: int | None = None) -> str:
        if not 1 <= n <= self.line_count:
            return ""
        src, k = self.locate(n)
        return src.line(k, max_chars)

    def lines(self, start: int, end: int, max_chars: int | None = None) -> list[str]:
        out: list[str] = []
        n = max(1, start)
        while n <= min(end, self.line_count):
            src, k = self.locate(n)
            last = min(src.line_count, k + (end - n))
            out += src.lines(k, last, max_chars)
            n += last - k + 1
        return out


def where(src: TextSource | LogSet, n: int) -> tuple[TextSource, int]:
    """(file, line in it) of line `n` of a file or of a LogSet."""
    return src.locate(n) if isinstance(src, LogSet) else (src, n)


def open_gz(root, skipped: list) -> tuple[list[tuple[str, TextSource]], list]:
    """The walker skips `.gz` files as binary; a folder of logs reads them decompressed
    (line numbers refer to the decompressed text). Returns (opened, still skipped)."""
    from dataclasses import replace

    from rlm.errors import UsageError

    opened, rest = [], []
    for s in skipped:
        if s.reason == "binary" and s.path.endswith(".gz"):
            try:
                src = TextSource.open(str(root / s.path))
                src.display = s.path
                opened.append((s.path, src))
                continue
            except UsageError as e:
                if "spool cap" in str(e):  # text we should have read: coverage is incomplete
                    s = replace(s, reason=f"unreadable: {e}")
        rest.append(s)
    return opened, rest
