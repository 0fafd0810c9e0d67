"""The log's clock over the stretches the counter read: a byte offset -> time map, by code.

The counter (rlm/corpus/counter.py) reads a file in blocks (~1/256 of it) and, while it does,
parses the time of each block's first and last timed line (a few lines per block, never every
line: the profile stays at disk speed). `clock_of` turns those into block start and end times,
so the rate rules (rlm/corpus/signals.py) compare shapes by lines per second on the log's own
clock instead of by share of a stretch of lines, and can say which minutes they mean.

When most blocks carry no time code could read, or a file's times go back (a clock reset,
lines far out of order), there is no clock and the rules fall back to stretches. The files of a
folder each have their own clock; they may overlap in time.
"""

from __future__ import annotations

import calendar
import math
from dataclasses import dataclass

from rlm.corpus.timeparse import YEARLESS, as_datetime, has_year, parser_for

PROBE_LINES = 8  # lines tried at each end of a block for a time
PROBE_BYTES = 4096
MIN_TIMED = 0.9  # share of blocks that must carry a time
MIN_DUR_S = 1.0  # most logs print whole seconds: no block is shorter than that on the clock
BACKSTEP_S = 300.0  # lines a little out of order are normal; a step back beyond this is not
YEAR_WRAP_S = 300 * 86_400  # a yearless log going back this far has passed New Year


def _first_time(lines: list[bytes], parse) -> float:
    for raw in lines:
        t = parse(raw.decode("utf-8", "replace"))
        if t is not None:
            return t
    return math.nan


def block_times(data: bytes, parse) -> tuple[float, float]:
    """(time of the first timed line, time of the last) among a few lines at each end."""
    head = data[:PROBE_BYTES].split(b"\n", PROBE_LINES)[:PROBE_LINES]
    tail = data[-PROBE_BYTES:].split(b"\n")
    if len(data) > PROBE_BYTES:
        tail = tail[1:]  # the slice may start inside a line
    tail = [x for x in tail[-PROBE_LINES - 1:] if x][::-1]
    return _first_time(head, parse), _first_time(tail, parse)


def timed_blocks(blocks, times: dict):
    """Pass (offset, block) through, noting each block's (first, last) time in `times` under
    its offset. The log's own format is picked once, from the first block."""
    parse = None
    for at, data in blocks:
        if parse is None:
            parse = parser_for(data[:16384].decode("utf-8", "replace").split("\n")[:50])
        times[at] = block_times(data, parse)
        yield at, data


@dataclass
class Clock:
    start: list[float]  # per block: the time its first line was written
    end: list[float]  # per block: when the next block of its file starts (else its last line)
    yearless: bool = False  # its lines print no year (past New Year, times were moved on)

    def __post_init__(self):
        self.scope = "the log"  # what the clock covers: the log, or a time window of it
        self.first, self.last = min(self.start), max(self.end)
        self.covered: list[tuple[float, float]] = []  # when some file was being written
        for a, b in sorted(zip(self.start, self.end)):
            if self.covered and a <= self.covered[-1][1]:
                self.covered[-1] = (self.covered[-1][0], max(b, self.covered[-1][1]))
            else:
                self.covered.append((a, b))
        self.span = self.active(self.first, self.last)

    def active(self, a: float, b: float) -> float:
        """Seconds of [a, b] during which the log was being written: the hours between two
        files of a folder (one a day, say) are not a quiet time of any shape."""
        return sum(max(0.0, min(b, y) - max(a, x)) for x, y in self.covered)

    def dur(self, b: int) -> float:
        return max(self.end[b] - self.start[b], MIN_DUR_S)

    def in_time_order(self, ids) -> list[int]:
        """Block ids by start time (a folder's files may overlap in time)."""
        return sorted(ids, key=lambda b: (self.start[b], b))

    def label(self, t: float, seconds: bool = True) -> str:
        d = as_datetime(t)
        s = d.strftime("%H:%M:%S" if seconds else "%H:%M")
        first, last = as_datetime(self.first), as_datetime(self.last)
        if self.last - self.first >= 86_400 or first.date() != last.date():
            s = d.strftime("%b %d ") + s + ("" if self.yearless else f" {d.year}")
        return s

    def align(self, t: float | None, b: int) -> float | None:
        """A time read from a line of block b, moved on the years its block was moved on."""
        k = 0
        while t is not None and self.yearless and t + _year(k) < self.start[b] - YEAR_WRAP_S:
            k += 1
        return None if t is None else t + _year(k)

    def between(self, a: float, b: float) -> str:
        return f"between {self.label(a)} and {self.label(b)}"


def _year(k: int) -> float:
    """Seconds from YEARLESS's New Year to k years later."""
    return float(calendar.timegm((YEARLESS + k, 1, 1, 0, 0, 0, 0, 0, 0))
                 - calendar.timegm((YEARLESS, 1, 1, 0, 0, 0, 0, 0, 0)))


def _unwrap_years(t0, t1) -> tuple[list[float], list[float], bool]:
    """A log without years (syslog) that runs past New Year goes back a year: each time it
    does, the times after it move on a year. Returns (first, last times, yearless)."""
    a0, a1 = list(t0), list(t1)
    yearless = any(not math.isnan(x) and not has_year(as_datetime(x)) for x in a0[:50])
    if not yearless:
        return a0, a1, False
    k, prev = 0, math.nan
    for b in range(len(a0)):
        for arr in (a0, a1):
            x = arr[b]
            if math.isnan(x):
                continue
            if not math.isnan(prev) and x + _year(k) < prev - YEAR_WRAP_S:
                k += 1
            arr[b] = x + _year(k)
            prev = arr[b]
    return a0, a1, True


def _file_starts(t0, t1, bs: range) -> list[float] | None:
    """Start times of one file's blocks, in order; None when its clock goes back."""
    start: list[float] = []
    prev = math.nan
    for b in bs:
        t = t0[b]
        if math.isnan(t):  # no time at its head: it starts when the block before ended
            t = t1[b - 1] if b > bs.start and not math.isnan(t1[b - 1]) else prev
        if not math.isnan(prev) and not math.isnan(t) and t < prev:
            if prev - t > BACKSTEP_S:
                return None
            t = prev  # a few lines written out of order
        start.append(t)
        prev = t if not math.isnan(t) else prev
    known = [t for t in start if not math.isnan(t)]
    if not known:
        return None
    return [known[0] if math.isnan(t) else t for t in start]  # untimed first blocks


def clock_of(t0, t1, files=None) -> tuple[Clock | None, str]:
    """The clock of a count's blocks from their (first, last) times, or (None, why not).
    `files`: each block's file (a folder): each file's clock runs on its own, and files may
    overlap in time (an app log and an auth log of the same hours)."""
    nb = len(t0)
    timed = sum(1 for x in t0 if not math.isnan(x))
    if nb == 0 or timed < MIN_TIMED * nb:
        return None, f"only {timed} of {nb} stretches carry a timestamp code could read"
    t0, t1, yearless = _unwrap_years(t0, t1)
    cuts = [0] + [b for b in range(1, nb) if files is not None and files[b] != files[b - 1]]
    start: list[float] = []
    end: list[float] = []
    for a, z in zip(cuts, cuts[1:] + [nb]):
        st = _file_starts(t0, t1, range(a, z))
        if st is None:
            return None, "the lines' times go back (a clock reset, or lines out of order)"
        last = t1[z - 1] if not math.isnan(t1[z - 1]) else st[-1]
        start += st
        end += st[1:] + [max(last, st[-1])]
    clock = Clock(start, end, yearless)
    if clock.span <= 0:
        return None, "every line carries the same time"
    return clock, ""


def duration(s: float) -> str:
    """'42 s', '5 min', '3 h 12 min', '2 days 4 h'."""
    s = int(round(s))
    if s < 120:
        return f"{s} s"
    if s < 7200:
        return f"{s // 60} min"
    if s < 172_800:
        h, m = divmod(s // 60, 60)
        return f"{h} h {m} min" if m else f"{h} h"
    d, h = divmod(s // 3600, 24)
    return f"{d} days {h} h" if h else f"{d} days"
