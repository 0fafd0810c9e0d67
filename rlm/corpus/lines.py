"""Lines of text files: the one whole-file line reader, the one numbered-line renderer and the
one range merger, shared by ask, audit, mine, evidence and the MCP tools.

Big corpora are read through :class:`rlm.corpus.source.TextSource` (mmap, line offsets, never
whole); :func:`read_lines` is for files that are read whole anyway (repository files, evidence
checks), cached by path, mtime and size.
"""

from __future__ import annotations

import gzip
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Iterable, Sequence

from rlm.corpus.beneath import open_file, read_bytes

MAX_LINE_CHARS = 2000  # a longer line is shown cut in prompts (marked, counted, declared)
CUT_MARK = " […]"


_CACHE_MAX_BYTES = 256 * 1024 * 1024  # keep at most ~this many file bytes of lines in memory
_cache: "OrderedDict[tuple[str, int, int], tuple[tuple[str, ...], int]]" = OrderedDict()
_cache_bytes = 0
_cache_lock = threading.Lock()


def _split_lines(text: str) -> tuple[str, ...]:
    """Split on "\\n", drop a trailing "\\r" per line; a trailing newline adds no line."""
    if not text:
        return ()
    out = text.split("\n")
    if out[-1] == "":
        out.pop()
    return tuple(s[:-1] if s.endswith("\r") else s for s in out)


def _load(path: Path) -> tuple[str, ...]:
    if path.suffix == ".gz":
        with open_file(path) as raw, gzip.GzipFile(fileobj=raw, mode="rb") as fh:
            data = fh.read()
    else:
        data = read_bytes(path)
    return _split_lines(data.decode("utf-8", errors="replace"))


def read_lines(path: Path) -> tuple[str, ...]:
    """The file's lines (UTF-8 with replacement characters; ``.gz`` read decompressed).

    Cached within the process, keyed on (path, mtime, size), so a file edited between two
    checks is read again. The cache is bounded by total file size (least recently used out).
    Raises OSError (and EOFError / gzip errors for broken .gz files) like ``open`` does.
    """
    global _cache_bytes
    p = Path(path)
    st = p.stat()
    key = (str(p), st.st_mtime_ns, st.st_size)
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
            return hit[0]
    lines = _load(p)
    weight = max(st.st_size, 1)
    with _cache_lock:
        if key not in _cache and weight <= _CACHE_MAX_BYTES:
            _cache[key] = (lines, weight)
            _cache_bytes += weight
            while _cache_bytes > _CACHE_MAX_BYTES and _cache:
                _, (_, w) = _cache.popitem(last=False)
                _cache_bytes -= w
    return lines


def clear_cache() -> None:
    """Forget every cached file (tests, long-running processes)."""
    global _cache_bytes
    with _cache_lock:
        _cache.clear()
        _cache_bytes = 0



# ------------------------------------------------------------------------------ rendering


def show_line(line: str, max_chars: int | None = MAX_LINE_CHARS) -> tuple[str, bool]:
    """A line as a prompt shows it: tabs as spaces, cut at max_chars (marked; None: never).
    Returns (text, cut)."""
    line = line.replace("\t", "    ")
    if max_chars is None or len(line) <= max_chars:
        return line, False
    return line[:max_chars] + CUT_MARK, True


def number_lines(lines: Sequence[str], first: int, *, width: int = 0,
                 max_chars: int | None = MAX_LINE_CHARS) -> tuple[str, int]:
    """``N| text`` for each line, N its 1-based number in the file (the first is ``first``), so
    a model can cite it. Returns the text and how many lines were cut."""
    return number_pairs(enumerate(lines, first), width=width, max_chars=max_chars)


def number_pairs(pairs: Iterable[tuple[int, str]], *, width: int = 0,
                 max_chars: int | None = MAX_LINE_CHARS) -> tuple[str, int]:
    """The one numbered-line renderer: ``N| text`` for each (line number, text), numbers
    right-aligned to ``width``, each line shaped by :func:`show_line`. (text, lines cut)"""
    out: list[str] = []
    cuts = 0
    for n, line in pairs:
        s, cut = show_line(line, max_chars)
        cuts += cut
        out.append(f"{n:>{width}}| {s}".rstrip())
    return "\n".join(out), cuts


def numbered_cost(lines: Sequence[str], a: int, b: int, width: int = 0,
                  max_chars: int = MAX_LINE_CHARS) -> int:
    """Characters lines a..b (1-based) take once rendered by :func:`number_pairs`, at most
    (numbers up to ``width`` digits; tabs not counted): what they cost in a prompt."""
    return sum(min(len(lines[i - 1]), max_chars + len(CUT_MARK)) + width + 3
               for i in range(a, b + 1))


# ------------------------------------------------------------------------------ ranges


def merge_ranges(ranges: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted, disjoint (start, end) ranges; touching or overlapping ones become one."""
    out: list[tuple[int, int]] = []
    for a, b in sorted(ranges):
        if out and a <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out
