"""Time windows in a question ("between 14:00 and 14:30", "around 14:05") and the lines
of a time-ordered log that fall in them.

A window with a date (`2026-03-14 14:00`) is one interval; a time of day alone applies to
every day the log covers. "around T" is T +- AROUND_S; "at 14:05" is that minute. Lines are
found by binary search on the timestamps (rlm.corpus.timeparse), so a 1 GB log costs a few
dozen line reads; lines without a timestamp (stack traces) take the time of the line above.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass

from rlm.corpus.timeparse import HEAD, YEARLESS, as_datetime, line_time
from rlm.corpus.timeparse import _BY_NAME as _FORMATS
from rlm.corpus.timepoints import Point, find_points
from rlm.errors import UsageError

AROUND_S = 5 * 60
DAY = 86_400
OPEN_END = float(1 << 40)  # "after T": to the end of the log
_RANGE_JOIN = re.compile(r"^\s*(?:and|to|until|till|through|-|–)\s*$", re.I)
_BEFORE_WORD = re.compile(r"(\w+|~)\s*$")
_AFTER_W, _BEFORE_W = {"after", "since", "from"}, {"before", "until", "till", "by"}
_AROUND_W = {"around", "about", "near", "approximately", "circa", "~"}
# what a person writes after a window word when they mean a time: read it, or say we could not
_TIMEISH = re.compile(r"\b(between|after|since|before|until|till|around|from)\s+"
                      r"(\d{1,2}(?:[:.h]\d*|\s*o'?clock)\S*|\d{1,4}[-/]\d\S*|yesterday|today|"
                      r"tonight|noon|midnight|last\s+\w+|this\s+\w+)", re.I)
# a window counted back from now, or from the log's end, with no number (with one, "the last 2
# hours" reads as a duration: rlm.corpus.literals makes it not sure): code reads only written
# times, and read as no window at all it answered for the whole file
_RELATIVE = re.compile(r"\b(?:(?:in|over|during|within|for)\s+)?the\s+(?:last|past|previous)"
                       r"\s+(?:few\s+|couple\s+of\s+)?(?:second|minute|hour|day|week|month)s?\b"
                       r"|\b(?:yesterday|last\s+(?:night|week|month|hour|day))\b", re.I)
EPOCH = _FORMATS["epoch"]
_IP = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}")


@dataclass
class Window:
    start: float  # seconds of day (time of day only) or since the epoch (with a date)
    end: float  # exclusive: "14:00 to 14:30" ends at 14:31:00
    dated: bool
    label: str
    year_free: tuple[int, int] | None = None  # (month, day) written without a year
    epoch: bool = False  # written as epoch seconds: placed by each file's own epoch field
    zone: str | None = None  # the zone the question wrote, if any
    span: tuple[int, int] = (0, 0)  # where the window is written in the question


def parse_window(question: str) -> Window | None:
    """The time window a question asks about, or None. Raises UsageError when the question
    names a time that code cannot read ("between noon and 3")."""
    points = find_points(question)
    _unread(question, points)
    if not points:
        return None
    got = _range(question, points) or _single(question, points)
    if got is None:
        return None
    used, a, b = got
    ctx_date = next((p.date for p in points if p.date and p.sod is None), None)
    ctx_date = ctx_date or next((p.date for p in used if p.date), None)
    return _resolve(question, points, used, a, b, ctx_date)


def _unread(question: str, points: list[Point]) -> None:
    m = _RELATIVE.search(question)
    if m and not _quoted(question, m.start()):
        raise UsageError(f"could not read the time {m.group(0).strip()!r}: code reads only "
                         "times the question writes, not times counted back from now or from "
                         "the log's end; write the window, e.g. 'after 2005-06-11 17:00' or "
                         "'between 09:00 and 10:00 on Dec 10'")
    for m in _TIMEISH.finditer(question):
        tok = m.group(2)
        if _IP.match(tok) or any(p.start <= m.start(2) < p.end for p in points):
            continue
        raise UsageError(f"could not read the time {tok!r} in {m.group(0)!r}: write times like "
                         "17:00 or 2005-06-11 17:00, dates like 2005-06-11 or Jun 11 2005 "
                         "(relative times such as 'yesterday' are not read)")


def _quoted(question: str, at: int) -> bool:
    """The position is inside quotes: words the log writes, not the question's."""
    return question[:at].count('"') % 2 == 1 or question[:at].count("`") % 2 == 1


def _word_before(question: str, p: Point) -> str:
    m = _BEFORE_WORD.search(question[: p.start])
    return m.group(1).lower() if m else ""


def _range(question: str, points: list[Point]):
    for p, q in zip(points, points[1:]):
        if _RANGE_JOIN.match(question[p.end:q.start]) and (p.sod is not None or p.epoch
                                                           or q.sod is not None or q.epoch
                                                           or _word_before(question, p)
                                                           in ("between", "from")):
            return [p, q], "from", "to"
    return None


def _single(question: str, points: list[Point]):
    timed = [p for p in points if p.sod is not None or p.epoch]
    for p in timed or points:
        w = _word_before(question, p)
        kind = ("after" if w in _AFTER_W else "before" if w in _BEFORE_W else
                "around" if w in _AROUND_W else "day" if p.sod is None and not p.epoch else "at")
        return [p], kind, None
    return None


def _abs(p: Point, date) -> float | None:
    if p.epoch:
        return float(p.epoch)
    d = p.date or date
    sod = p.sod or 0
    if d is None:
        return None if p.sod is None else float(sod)
    return calendar.timegm((d[0] or YEARLESS, d[1], d[2], 0, 0, 0, 0, 0, 0)) + sod


def _whole_day(p: Point) -> bool:
    return p.sod is None and not p.epoch and p.date is not None


def _resolve(question, points, used, a_kind, b_kind, date) -> Window:
    p = used[0]
    dated = date is not None or bool(p.epoch)
    start = _abs(p, date)
    last = used[-1]
    step = 1 if last.seconds else 60 if last.sod is not None else DAY if not last.epoch else 1
    if b_kind:  # a range: the end is inclusive of its minute (or second, or day)
        end = _abs(last, p.date or date) + step
        if end <= start and last.date is None:
            end += DAY  # 23:00 to 01:00 crosses midnight
    elif a_kind == "after":
        start, end = start, (OPEN_END if dated else DAY)
        if _whole_day(p) and _word_before(question, p) == "after":
            start += DAY  # "after Dec 04": Dec 05 on ("since Dec 04" is Dec 04 on)
    elif a_kind == "before":
        start, end = (0.0 if dated else 0.0), start
        if _whole_day(p) and _word_before(question, p) in ("until", "till", "by"):
            end += DAY  # "until Dec 04": Dec 04 too ("before Dec 04" ends as Dec 04 starts)
    elif a_kind == "around":
        start, end = start - AROUND_S, start + AROUND_S
    else:  # at a minute, or on a day
        end = start + step
    first = min(x.start for x in points if x in used or (x.date and x.sod is None))
    m = _BEFORE_WORD.search(question[:first])  # the window word ("between", "on")
    if m and (m.group(1).lower() in _AFTER_W | _BEFORE_W | _AROUND_W | {"between", "at", "on"}):
        first = m.start()
    stop = max(x.end for x in points if x in used or (x.date and x.sod is None))
    label = question[first:stop].strip()
    if a_kind == "around":
        label += " (+-5 minutes)"
    year = next((d[0] for d in [p.date, date] if d), 0)
    return Window(start, end, dated, label,
                  year_free=(date or p.date)[1:] if dated and year is None and not p.epoch else None,
                  epoch=bool(p.epoch), zone=next((x.zone for x in used if x.zone), None),
                  span=(first, stop))


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


def _first_time(src) -> tuple[float | None, str]:
    for n in range(1, min(src.line_count, 200) + 1):
        text = src.line(n, 200)
        if (t := line_time(text)) is not None:
            return t, text
    return None, ""


def _shift(src, w: Window, first: float, text: str) -> float:
    """Seconds to add to a dated window to put it on this file's clock: an epoch window by
    the file's own epoch field (BGL writes both), a date without a year (or any date, in a
    log that writes no year) in the year of the file's first line."""
    if w.epoch:
        e = EPOCH.search(text[:HEAD])
        return first - int(e.group("e")) if e else 0.0
    year = as_datetime(first).year
    # the day the question named: the end of "before Dec 05" (its start is open)
    d = as_datetime(w.end if w.start == 0.0 and w.end < OPEN_END else w.start)
    if w.year_free is not None:  # "Jun 11": the file's year
        frm, to = YEARLESS, year
    elif year == YEARLESS and d.year != YEARLESS:  # the log writes no year: month and day
        frm, to = d.year, YEARLESS
    else:
        return 0.0
    try:
        return (calendar.timegm((to, d.month, d.day, 0, 0, 0, 0, 0, 0))
                - calendar.timegm((frm, d.month, d.day, 0, 0, 0, 0, 0, 0)))
    except ValueError:  # Feb 29 in a year without one
        return 0.0


def intervals(src, w: Window) -> list[tuple[float, float]]:
    """Absolute [start, end) intervals of the window on this file's clock."""
    first, text = _first_time(src)
    if w.dated:
        if first is None:
            return []
        k = _shift(src, w, first, text)
        return [(w.start + k, w.end + k)]
    last = _time_at(src, src.line_count, 200)
    if first is None or last is None:
        return []
    out = []
    day = first - first % DAY
    while day <= last:
        out.append((day + w.start, day + w.end))
        day += DAY
    return out


ORDER_SAMPLES = 512


def time_ordered(src) -> bool:
    """Whether the log's times never go back, on evenly spaced samples (a folder's logs
    merged into one file, like LogHub's Zookeeper sample, are not: binary search would cut
    the wrong lines)."""
    n = src.line_count
    step = max(1, n // ORDER_SAMPLES)
    last = None
    for ln in list(range(1, n + 1, step)) + [n]:
        t = _time_at(src, ln)
        if t is None:
            continue
        if last is not None and t < last:
            return False
        last = t
    return True


def _scan_window(src, w: Window) -> list[tuple[int, int]]:
    """Every line's time read (a line without one takes the time above): for a log whose
    times go back."""
    from rlm.corpus.counts import _candidate_lines
    from rlm.corpus.lines import merge_ranges
    from rlm.corpus.timeparse import parser_for

    parse = parser_for(src.lines(1, min(src.line_count, 50), 200))
    ivs = intervals(src, w) if w.dated else None
    out, t = [], None
    for ln, text in _candidate_lines(src, None, 1, src.line_count):
        t = (parse(text[:200]) if text else None) or t
        if t is None:
            continue
        inside = (any(a <= t < b for a, b in ivs) if ivs is not None
                  else w.start <= t % DAY < w.end)
        if inside:
            out.append((ln, ln))
    return merge_ranges(out)


def window_lines(src, w: Window) -> list[tuple[int, int]]:
    """Line ranges (first, last; 1-based, inclusive) of the window: by binary search in a
    time-ordered log, else by reading every line's time."""
    if not time_ordered(src):
        return _scan_window(src, w)
    out = []
    for a, b in intervals(src, w):
        first = _first_at_or_after(src, a)
        last = _first_at_or_after(src, b) - 1  # the end is exclusive
        if first <= last:
            out.append((first, last))
    return out


def log_window(kind: str, src, window: Window | None) -> tuple[list[tuple[int, int]] | None,
                                                               Window | None]:
    """(line ranges, window) for a log whose question names a time window (the query's,
    rlm.pipeline.query), else (None, None)."""
    w = window if kind == "log" else None
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


def log_span(src) -> str:
    """When a log's lines run, for an answer whose window holds none of them: `from Dec 10
    06:55:46 (line 1) to Dec 10 11:04:45 (line 2,000)`; empty when its lines carry no time."""
    first, _ = _first_time(src)
    last = _time_at(src, src.line_count, 200)
    if first is None or last is None:
        return ""

    def shown(t: float) -> str:
        d = as_datetime(t)
        return d.strftime("%b %d %H:%M:%S" if d.year == YEARLESS else "%Y-%m-%d %H:%M:%S")

    return f"from {shown(first)} (line 1) to {shown(last)} (line {src.line_count:,})"
