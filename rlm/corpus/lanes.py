"""Where every line of each event kind falls: the timeline's lanes, recorded by code.

Per kind (rlm.corpus.templates.EventKind): its lines counted in BINS equal bins over the log's
line span, and in BINS equal bins over its time span when the lines carry times, plus each line
itself (with its time) when there are at most MARKS. Which lines are known:

- a kind of at most KEEP lines: every one, free (the template table kept their numbers);
- on a log up to EXACT_MAX_BYTES: every line, by one more pass (the file masked again, as
  `TemplateTable.assign` does; one numpy step per block);
- beyond it: by block (the counter's per-block counts, each block ~1/256 of a file, placed at
  its middle line); without those (a time window, a capped count), the examples only.
`placed` says which, per kind, so a lane never looks more complete than it is.

The time axis is the log's own clock: the time of ~FINE lines spread evenly over the log (and
each file's first and last), each read in its file's own format; a line's time is interpolated
between them. There is no time axis when under 90% of them carry a readable time, a file's
times go back, or some files write a year and others do not; the record then says why.
"""

from __future__ import annotations

import calendar
from bisect import bisect_right
from dataclasses import dataclass, field

import numpy as np

from rlm.corpus.clock import BACKSTEP_S, MIN_TIMED, YEAR_WRAP_S
from rlm.corpus.counter import read_blocks
from rlm.corpus.line_offsets import STEP
from rlm.corpus.mask import mask_block
from rlm.corpus.templates import KEEP
from rlm.corpus.timeparse import YEARLESS, as_datetime, has_year, parser_for, text_reader_for
from rlm.engine.interrupt import checkpoint

VERSION = 1
BINS = 200  # a lane's bins: 5 px each on a 1000 px axis
MARKS = 60  # a kind with at most this many lines is drawn line by line
KINDS_MAX = 200  # kinds recorded (the first of the ranking): the page draws as many lanes
FINE = 4096  # lines whose time is read to put the others on the clock
PROBE = 8  # an untimed line (a stack trace's): the next lines are tried for a time
OWN_SLACK_S = 3600  # a line's own time this far from its neighbours' is a misread: not used
EXACT_MAX_BYTES = 64 << 20  # one more pass over logs up to this size (evals/bench_html.py: ~0.3 of a run)


def _files(src) -> tuple[list, list[int]]:
    files = getattr(src, "sources", None)
    return (files, list(src.starts)) if files is not None else ([src], [0])


@dataclass
class LineClock:
    """A global line number -> the log's time (seconds, as rlm.corpus.timeparse reads them)."""

    lines: np.ndarray  # lines whose time was read, ascending
    times: np.ndarray
    first: float
    last: float
    first_seen: str | None  # the first and last time as the file writes them
    last_seen: str | None

    parsers: dict = field(default_factory=dict)  # file index -> its time reader

    def at(self, lines) -> np.ndarray:
        return np.interp(np.asarray(lines, dtype=np.float64), self.lines, self.times)

    def own(self, src, lines: list[int]) -> list[float]:
        """Each line's own time when it carries one (else its place between read times),
        moved to the year its neighbours are in (a yearless log past New Year)."""
        files, starts = _files(src)
        near = self.at(lines).tolist()
        out = []
        for ln, guess in zip(lines, near):
            i = max(0, bisect_right(starts, ln - 1) - 1)
            parse = self.parsers.get(i)
            t = parse(files[i].line(ln - starts[i], 400)) if parse else None
            if t is not None:
                t = min((t + _year(k) for k in range(4)), key=lambda x: abs(x - guess))
            out.append(t if t is not None and abs(t - guess) <= OWN_SLACK_S else guess)
        return out


def _file_times(f, start: int, k: int) -> tuple[list[int], list[float], int, object, object]:
    """(global lines, times) of about `k` lines of one file, evenly spread; how many of the
    lines tried carried no time within PROBE lines; the file's time parser and text reader."""
    n = f.line_count
    sample = [f.line(i, 400) for i in range(1, min(50, n) + 1)]
    parse = parser_for(sample)
    # on a big file, lines the sampled index knows (every STEP-th), read by plain reads: no
    # mmap page is left resident by the sampling (rlm.corpus.source.sampled_lines)
    grid, step = ((n - 1) // STEP, STEP) if n > k * STEP else (n - 1, 1)
    picks = sorted({1 + step * round(grid * j / max(k - 1, 1)) for j in range(k)} | {n})
    lines, times, missed = [], [], 0
    for ln in picks:
        got = getattr(f, "sampled_lines", lambda *a: None)(ln, PROBE)
        texts = got if got is not None else [f.line(p, 400) for p in
                                             range(ln, min(n, ln + PROBE - 1) + 1)]
        for probe, text in enumerate(texts, ln):
            t = parse(text)
            if t is not None:
                if not lines or start + probe > lines[-1]:
                    lines.append(start + probe)
                    times.append(t)
                break
        else:
            missed += 1
    return lines, times, missed, parse, text_reader_for(sample)


def _year(k: int) -> float:
    """Seconds from YEARLESS's New Year to k years later (as rlm.corpus.clock moves them)."""
    return float(calendar.timegm((YEARLESS + k, 1, 1, 0, 0, 0)) - calendar.timegm((YEARLESS, 1, 1, 0, 0, 0)))


def _unwrap(times: list[float]) -> tuple[list[float], str]:
    """A yearless file that passes New Year goes on in the next year; any other step back
    beyond BACKSTEP_S means no clock (the reason)."""
    out, k = [], 0
    for t in times:
        if out and t + _year(k) < out[-1] - BACKSTEP_S:
            if has_year(as_datetime(t)) or out[-1] - (t + _year(k)) <= YEAR_WRAP_S:
                return out, "the lines' times go back (a clock reset, or lines out of order)"
            k += 1
        out.append(t + _year(k))
    return out, ""


def line_clock(src, fine: int = FINE) -> tuple[LineClock | None, str]:
    """The log's clock by line number, or (None, why there is none)."""
    files, starts = _files(src)
    total = max(1, sum(f.line_count for f in files))
    lines: list[int] = []
    times: list[float] = []
    tried = missed = 0
    years = set()
    ends: list[tuple[float, int, object]] = []  # (time, global line, reader) of each file's ends
    parsers: dict = {}
    for i, (f, s) in enumerate(zip(files, starts)):
        if not f.line_count:
            continue
        k = max(2, round(fine * f.line_count / total))
        ls, ts, miss, parsers[i], reader = _file_times(f, s, k)
        tried, missed = tried + min(k, f.line_count), missed + miss
        ts, why = _unwrap(ts)
        if why:
            return None, f"{why} in {f.display}"
        if ts:
            years.add(has_year(as_datetime(ts[0])))
            ends += [(ts[0], ls[0], reader), (ts[-1], ls[-1], reader)]
        lines += ls
        times += ts
    if not tried or len(lines) < 2 or missed > (1 - MIN_TIMED) * tried:
        return None, "this log has no readable times" if not lines else (
            f"only {tried - missed:,} of {tried:,} lines sampled carry a time code could read")
    if len(years) > 1:
        return None, ("some files write times without a year and others with one, so they "
                      "share no clock")
    (t0, l0, r0), (t1, l1, r1) = min(ends, key=lambda e: e[0]), max(ends, key=lambda e: e[0])
    if t1 <= t0:
        return None, "every line carries the same time"
    order = np.argsort(np.asarray(lines), kind="stable")
    return LineClock(np.asarray(lines, dtype=np.float64)[order],
                     np.asarray(times, dtype=np.float64)[order], t0, t1,
                     r0(src.line(l0, 400)), r1(src.line(l1, 400)), parsers), ""


class Bins:
    """Per lane: counts by line bin and by time bin, and the lines of the small lanes."""

    def __init__(self, n_lanes: int, total_lines: int, clock: LineClock | None, bins: int = BINS):
        self.total, self.clock, self.bins = max(1, total_lines), clock, bins
        self.by_line = np.zeros((n_lanes, bins))  # shares of lines when placed by block
        self.by_time = np.zeros((n_lanes, bins))
        self.marks: dict[int, list[int]] = {}  # lane -> its lines (lanes of at most MARKS)

    def add(self, lanes: np.ndarray, lines: np.ndarray) -> None:
        if not len(lines):
            return
        n, b = len(self.by_line), self.bins
        lb = np.minimum((lines - 1) * b // self.total, b - 1)
        self.by_line += np.bincount(lanes * b + lb, minlength=n * b).reshape(n, b)
        if self.clock is not None:
            c = self.clock
            tb = np.clip(((c.at(lines) - c.first) / (c.last - c.first) * b).astype(np.int64),
                         0, b - 1)
            self.by_time += np.bincount(lanes * b + tb, minlength=n * b).reshape(n, b)


def _in_ranges(lines: np.ndarray, ranges: list[tuple[int, int]] | None) -> np.ndarray:
    if ranges is None:
        return np.ones(len(lines), dtype=bool)
    starts = np.asarray([a for a, _ in ranges])
    ends = np.asarray([b for _, b in ranges])
    i = np.searchsorted(starts, lines, side="right") - 1
    return (i >= 0) & (lines <= ends[np.maximum(i, 0)])


def exact_pass(src, table, lane_of: dict[int, int], small: set[int], out: Bins,
               ranges: list[tuple[int, int]] | None = None) -> None:
    """Every line of the kinds in `lane_of` (kind id -> lane) into `out`: the file masked
    again block by block; the lines of `small` lanes are kept whole."""
    of = table.of_shape
    lut = np.full(max(lane_of, default=0) + 1, -1, dtype=np.int64)
    for kid, lane in lane_of.items():
        lut[kid] = lane
    files, starts = _files(src)
    for f, base in zip(files, starts):
        for _, block in read_blocks(f.path):
            checkpoint()
            rows = mask_block(block).split(b"\n")
            if block.endswith(b"\n"):
                rows.pop()
            ids = np.fromiter((of.get(r, 0) for r in rows), dtype=np.int64, count=len(rows))
            lanes = lut[np.minimum(ids, len(lut) - 1)]
            lanes[ids >= len(lut)] = -1
            at = np.nonzero(lanes >= 0)[0]
            lines = base + at + 1
            keep = _in_ranges(lines, ranges)
            lines, lanes = lines[keep], lanes[at][keep]
            out.add(lanes, lines)
            for ln, lane in zip(lines.tolist(), lanes.tolist()):
                if lane in small:
                    out.marks.setdefault(lane, []).append(ln)
            base += len(rows)


def _spread(row: np.ndarray, lo: float, hi: float, count: float) -> None:
    """Add `count` lines spread evenly over [lo, hi) in bin units: a block over two bins gives
    each its share, so an even rate draws as an even shade whatever the block size."""
    b = len(row)
    lo, hi = min(max(lo, 0.0), b), min(max(hi, 0.0), b)
    if hi - lo < 1e-9:
        row[min(int(lo), b - 1)] += count
        return
    i = int(lo)
    while i < b and i < hi:
        row[i] += count * (min(hi, i + 1) - max(lo, i)) / (hi - lo)
        i += 1


def block_pass(table, lane_of: dict[int, int], out: Bins) -> bool:
    """Each kind's count per block (the counter's series), spread over the block's lines and
    its time. False when the counter kept no series (capped, or a time window's count)."""
    tc = table.counter
    if tc is None or not tc.series or tc.series_overflow or tc.counted is not None:
        return False
    starts = np.asarray(tc.block_line, dtype=np.float64)  # lines before each block
    ends = np.append(starts[1:], tc.lines)
    scale = out.bins / out.total
    clock = out.clock
    if clock is not None:
        t_lo, t_hi = clock.at(starts + 1), clock.at(np.maximum(ends, starts + 1))
        t_scale = out.bins / (clock.last - clock.first)
    for kid, lane in lane_of.items():
        for shape in table.by_id(kid).shapes:
            ids, counts = tc.series.get(shape, ((), ()))
            for bid, c in zip(ids, counts):
                _spread(out.by_line[lane], starts[bid] * scale, ends[bid] * scale, c)
                if clock is not None:
                    _spread(out.by_time[lane], (t_lo[bid] - clock.first) * t_scale,
                            (t_hi[bid] - clock.first) * t_scale, c)
    return True


def _whole(row: np.ndarray) -> list[int]:
    """Counts spread in shares back to whole lines, keeping the sum (largest remainders)."""
    floor = np.floor(row + 1e-9).astype(np.int64)
    left = int(round(row.sum())) - int(floor.sum())
    if left > 0:
        floor[np.argsort(-(row - floor), kind="stable")[:left]] += 1
    return floor.tolist()


def _time_record(clock: LineClock | None) -> dict | None:
    if clock is None:
        return None
    return {"first": round(clock.first, 3), "last": round(clock.last, 3),
            "first_seen": clock.first_seen, "last_seen": clock.last_seen}


def _lane_record(src, k, lane: int, placed: str, out: Bins) -> dict:
    marks = out.marks.get(lane)
    rec: dict = {"count": int(round(out.by_line[lane].sum())), "placed": placed}
    if marks is not None and len(marks) <= MARKS:
        lines = sorted(marks)
        times = ([round(t, 3) for t in out.clock.own(src, lines)] if out.clock is not None
                 else None)
        rec["marks"] = [[ln, times[i] if times else None] for i, ln in enumerate(lines)]
    else:
        rec["line_bins"] = _whole(out.by_line[lane])
        if out.clock is not None:
            rec["time_bins"] = _whole(out.by_time[lane])
    if placed == "examples":
        rec["count"] = k.count  # the marks are a few of them: the lane says so
    return rec


def _edge_time(f, lines, parse, reader) -> tuple[float, int, str | None] | None:
    for ln in lines:
        text = f.line(ln, 400)
        t = parse(text)
        if t is not None:
            return t, ln, reader(text)
    return None


def span_record(src) -> dict:
    """The `timeline` record of a log answer without event kinds (a search, a count): the
    log's first and last time (first and last timed line of each file), so its lanes stand
    on the log's whole clock; no kinds. Reads a few lines at each end of each file."""
    files, _ = _files(src)
    ends = []
    for f in files:
        n = f.line_count
        sample = [f.line(i, 400) for i in range(1, min(50, n) + 1)]
        parse, reader = parser_for(sample), text_reader_for(sample)
        a = _edge_time(f, range(1, min(n, PROBE) + 1), parse, reader)
        b = _edge_time(f, range(n, max(0, n - PROBE), -1), parse, reader)
        if a and b and b[0] >= a[0]:
            ends += [a, b]
    years = {has_year(as_datetime(t)) for t, _, _ in ends}
    time = None
    if ends and len(years) == 1:
        (t0, _, s0), (t1, _, s1) = min(ends), max(ends)
        if t1 > t0:
            time = {"first": round(t0, 3), "last": round(t1, 3), "first_seen": s0, "last_seen": s1}
    return {"version": VERSION, "bins": BINS, "lines": sum(f.line_count for f in files),
            "files": [{"path": f.display, "lines": f.line_count} for f in files],
            "time": time, "no_time": "" if time else "no shared clock read at the files' ends",
            "window": False, "placed": "", "kinds": {}}


def kind_lanes(src, table, kinds: list, ranges: list[tuple[int, int]] | None = None,
               exact_max_bytes: int = EXACT_MAX_BYTES) -> dict:
    """The report's `timeline` record for these event kinds (rlm.corpus.templates.EventKind)
    of a file or a folder's LogSet (the first KINDS_MAX of them: the record stays small
    however many kinds a log has); `ranges`: a time window's lines (only those are placed)."""
    kinds = kinds[:KINDS_MAX]
    clock, no_time = line_clock(src)
    files, _ = _files(src)
    out = Bins(len(kinds), sum(f.line_count for f in files), clock)
    placed: dict[int, str] = {}
    need: dict[int, int] = {}  # kind id -> lane: kinds with more lines than the table kept
    for lane, k in enumerate(kinds):
        if k.count <= KEEP and len(k.examples) >= k.count:
            out.add(np.full(len(k.examples), lane), np.asarray(k.examples, dtype=np.int64))
            out.marks[lane] = list(k.examples)
            placed[lane] = "lines"
        else:
            need[k.id] = lane
    how = ""
    if need:
        small = {lane for kid, lane in need.items() if table.by_id(kid).count <= MARKS}
        if src.size <= exact_max_bytes:
            exact_pass(src, table, need, small, out, ranges)
            how = "lines"
        elif ranges is None and block_pass(table, need, out):
            how = "blocks"
        else:
            how = "examples"
            for lane in need.values():
                out.marks[lane] = list(kinds[lane].examples)
        placed.update((lane, how) for lane in need.values())
    return {"version": VERSION, "bins": out.bins, "lines": out.total,
            "files": [{"path": f.display, "lines": f.line_count} for f in files],
            "time": _time_record(clock), "no_time": no_time, "window": ranges is not None,
            "placed": how or "lines",
            "kinds": {str(k.id): _lane_record(src, k, lane, placed[lane], out)
                      for lane, k in enumerate(kinds)}}
