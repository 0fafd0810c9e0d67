"""Time windows in a question ("between 14:00 and 14:30", "around 14:05") and the lines
of a time-ordered log that fall in them.

A window with a date (`2026-03-14 14:00`) is one interval; a time of day alone applies to
every day the log covers. "around T" is T +- AROUND_S; "at 14:05" is that minute. Lines are
found by binary search on the timestamps (rlm.corpus.timeparse), so a 1 GB log costs a few
dozen line reads; lines without a timestamp (stack traces) take the time of the line above.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rlm.corpus.timeparse import line_time

AROUND_S = 5 * 60
DAY = 86_400
_T = r"(\d{1,2}):(\d{2})(?::(\d{2}))?\s*(am|pm)?"
_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_BETWEEN = re.compile(rf"\b(?:between|from)\s+{_T}\s+(?:and|to|until|-)\s+{_T}", re.I)
_RANGE = re.compile(rf"\b{_T}\s*-\s*{_T}\b", re.I)
_AROUND = re.compile(rf"\b(?:around|about|near|approximately|circa|~)\s*{_T}", re.I)
_AT = re.compile(rf"\bat\s+{_T}", re.I)
_AFTER = re.compile(rf"\b(?:after|since)\s+{_T}", re.I)
_BEFORE = re.compile(rf"\b(?:before|until|till)\s+{_T}", re.I)


@dataclass
class Window:
    start: float  # seconds of day (time of day only) or since the epoch (with a date)
    end: float  # exclusive: "14:00 to 14:30" ends at 14:31:00
    dated: bool
    label: str


def _sod(g: tuple) -> float:
    h, m, s, ampm = int(g[0]), int(g[1]), int(g[2] or 0), (g[3] or "").lower()
    if ampm == "pm" and h < 12:
        h += 12
    if ampm == "am" and h == 12:
        h = 0
    return h * 3600 + m * 60 + s


def parse_window(question: str) -> Window | None:
    """The time window a question asks about, or None."""
    q = question
    found = None
    if m := _BETWEEN.search(q) or _RANGE.search(q):
        a, b = _sod(m.groups()[:4]), _sod(m.groups()[4:])
        found = (a, b + (60 if m.group(7) is None else 1), f"between {m.group(1)}:{m.group(2)} "
                                                           f"and {m.group(5)}:{m.group(6)}")
    elif m := _AROUND.search(q):
        t = _sod(m.groups())
        found = (t - AROUND_S, t + AROUND_S, f"around {m.group(1)}:{m.group(2)} (+-5 minutes)")
    elif m := _AFTER.search(q):
        found = (_sod(m.groups()), DAY, f"after {m.group(1)}:{m.group(2)}")
    elif m := _BEFORE.search(q):
        found = (0, _sod(m.groups()), f"before {m.group(1)}:{m.group(2)}")
    elif m := _AT.search(q):
        t = _sod(m.groups())
        found = (t, t + (60 if m.group(3) is None else 1), f"at {m.group(1)}:{m.group(2)}")
    if not found:
        return None
    a, b, label = found
    if d := _DATE.search(q):
        import calendar

        day = calendar.timegm((int(d.group(1)), int(d.group(2)), int(d.group(3)), 0, 0, 0, 0, 0, 0))
        return Window(day + a, day + b, True, f"{label} on {d.group(0)}")
    return Window(a, b, False, label)


def _time_at(src, n: int, limit: int = 50) -> float | None:
    """Time of line n, or of the nearest timed line above it (continuations)."""
    for k in range(n, max(0, n - limit), -1):
        t = line_time(src.line(k, 200))
        if t is not None:
            return t
    return None


def _first_at_or_after(src, t: float) -> int:
    lo, hi = 1, src.line_count + 1
    while lo < hi:
        mid = (lo + hi) // 2
        tm = _time_at(src, mid)
        if tm is not None and tm < t:
            lo = mid + 1
        else:
            hi = mid
    return lo


def intervals(src, w: Window) -> list[tuple[float, float]]:
    """Absolute [start, end) intervals of the window over the days the log covers."""
    if w.dated:
        return [(w.start, w.end)]
    first = next((t for n in range(1, min(src.line_count, 200) + 1)
                  if (t := line_time(src.line(n, 200))) is not None), None)
    last = _time_at(src, src.line_count, 200)
    if first is None or last is None:
        return []
    out = []
    day = first - first % DAY
    while day <= last:
        out.append((day + w.start, day + w.end))
        day += DAY
    return out


def window_lines(src, w: Window) -> list[tuple[int, int]]:
    """Line ranges (first, last; 1-based, inclusive) of the window, in a time-ordered log."""
    out = []
    for a, b in intervals(src, w):
        first = _first_at_or_after(src, a)
        last = _first_at_or_after(src, b) - 1  # the end is exclusive
        if first <= last:
            out.append((first, last))
    return out


def log_window(kind: str, src, question: str) -> tuple[list[tuple[int, int]] | None, Window | None]:
    """(line ranges, window) for a log whose question names a time window, else (None, None)."""
    w = parse_window(question) if kind == "log" else None
    return (window_lines(src, w), w) if w else (None, None)


def keep_in(lines: list[int], ranges: list[tuple[int, int]]) -> list[int]:
    """The line numbers that fall in the ranges."""
    return [ln for ln in lines if any(a <= ln <= b for a, b in ranges)]


def folder_window_lines(logs, w: Window) -> tuple[list[tuple[int, int]],
                                                  dict[str, list[tuple[int, int]]]]:
    """A folder of logs (rlm.corpus.logset.LogSet): the window's line ranges in the folder's
    global numbering, and per file in its own numbering (each file searched by time)."""
    glob: list[tuple[int, int]] = []
    per_file: dict[str, list[tuple[int, int]]] = {}
    for f, start in zip(logs.sources, logs.starts):
        r = window_lines(f, w)
        per_file[f.display] = r
        glob += [(start + a, start + b) for a, b in r]
    return glob, per_file


def window_note(w: Window, per_file: dict[str, list[tuple[int, int]]],
                totals: dict[str, int] | None = None) -> str:
    """What the window kept, per file; with `totals` (lines per file), what it left out."""
    spans = "; ".join(f"{p}: " + (", ".join(f"{a:,}-{b:,}" for a, b in r[:3]) or "no lines")
                      for p, r in list(per_file.items())[:5])
    more = f"; {len(per_file) - 5} more files" if len(per_file) > 5 else ""
    note = f"restricted to the time window {w.label} ({spans}{more})"
    if totals:
        kept = sum(b - a + 1 for r in per_file.values() for a, b in r)
        total = sum(totals.values())
        none = [p for p, r in per_file.items() if not r]
        note += (f": {kept:,} of {total:,} lines are in it; the other {total - kept:,} lines, "
                 "outside the window, were left out")
        if none:
            note += f" (files with no line in it: {', '.join(none[:5])}" + (
                f" and {len(none) - 5} more)" if len(none) > 5 else ")")
    return note
