"""Timestamps of log lines, from a tested table of formats (tests/test_timeparse.py).

`line_time(line)` returns seconds since the epoch as if the log's clock were UTC (no time
zone arithmetic: a question's "14:05" means the log's own clock), or None. Formats without a
year (syslog, logcat, Proxifier) get YEARLESS, so their times order correctly within a year.
The earliest match in the first HEAD characters wins (BGL: the epoch before its dates).
"""

from __future__ import annotations

import calendar
import re

HEAD = 120
YEARLESS = 2000  # a leap year: Feb 29 parses
_MON = {m: i for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split(), 1)}


def _num(*names):
    return lambda m: tuple(int(m.group(n) or 0) for n in names)


def _frac(s: str | None) -> float:
    return float("0." + s) if s else 0.0


# (name, regex, fields -> (Y, M, D, h, m, s, frac)); named groups: Y M D h m s f, b (month name)
_D = r"(?P<h>\d{2}):(?P<m>\d{2}):(?P<s>\d{2})"
FORMATS: list[tuple[str, re.Pattern]] = [
    ("epoch_ms", re.compile(r"(?<![\d.])(?P<ms>1\d{12})(?![\d.])")),
    ("epoch", re.compile(r"(?<![\d.:-])(?P<e>1\d{9})(?:\.(?P<f>\d{1,6}))?(?![\d:-])")),
    ("iso", re.compile(r"(?<!\d)(?P<Y>\d{4})-(?P<M>\d{2})-(?P<D>\d{2})[T ]" + _D + r"(?:[.,](?P<f>\d{1,9}))?")),
    ("bgl", re.compile(r"(?<!\d)(?P<Y>\d{4})-(?P<M>\d{2})-(?P<D>\d{2})-(?P<h>\d{2})\.(?P<m>\d{2})\.(?P<s>\d{2})(?:\.(?P<f>\d{1,6}))?")),
    ("slash_ymd", re.compile(r"(?<!\d)(?P<Y>\d{4})/(?P<M>\d{2})/(?P<D>\d{2})[ :T]" + _D)),
    ("apache", re.compile(r"\[\w{3} (?P<b>\w{3}) (?P<D>\d{2}) " + _D + r"(?:\.(?P<f>\d+))? (?P<Y>\d{4})\]")),
    ("clf", re.compile(r"\[(?P<D>\d{2})/(?P<b>\w{3})/(?P<Y>\d{4}):" + _D)),
    ("spark", re.compile(r"^(?P<y>\d{2})/(?P<M>\d{2})/(?P<D>\d{2}) " + _D)),
    ("hdfs", re.compile(r"^(?P<y>\d{2})(?P<M>\d{2})(?P<D>\d{2}) (?P<h>\d{2})(?P<m>\d{2})(?P<s>\d{2})\b")),
    ("healthapp", re.compile(r"^(?P<Y>\d{4})(?P<M>\d{2})(?P<D>\d{2})-(?P<h>\d{1,2}):(?P<m>\d{1,2}):(?P<s>\d{1,2})(?::(?P<f>\d+))?")),
    ("syslog", re.compile(r"(?<!\w)(?P<b>Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) {1,2}(?P<D>\d{1,2}) " + _D)),
    ("logcat", re.compile(r"^(?P<M>\d{2})-(?P<D>\d{2}) " + _D + r"\.(?P<f>\d{3})")),
    ("proxifier", re.compile(r"^\[(?P<M>\d{2})\.(?P<D>\d{2}) " + _D + r"\]")),
]


def _seconds(name: str, m: re.Match) -> float | None:
    g = m.groupdict()
    if name == "epoch_ms":
        return int(g["ms"]) / 1000.0
    if name == "epoch":
        return int(g["e"]) + _frac(g.get("f"))
    if g.get("Y"):
        year = int(g["Y"])
    elif g.get("y"):
        year = 2000 + int(g["y"])
    else:
        year = YEARLESS
    month = _MON.get(g["b"].lower()) if g.get("b") else int(g["M"])
    if not month:
        return None
    try:
        t = calendar.timegm((year, month, int(g["D"]), int(g["h"]), int(g["m"]), int(g["s"]), 0, 0, 0))
    except (ValueError, OverflowError):
        return None
    if not (1 <= month <= 12 and 1 <= int(g["D"]) <= 31 and int(g["h"]) < 24 and int(g["m"]) < 60
            and int(g["s"]) <= 60):
        return None
    return t + _frac(g.get("f")) if name != "healthapp" else t + int(g.get("f") or 0) / 1000.0


def line_time(line: str) -> float | None:
    """Seconds (log clock as UTC) of the first timestamp in the line's head, or None."""
    head = line[:HEAD]
    best: tuple[int, str, re.Match] | None = None
    for name, rx in FORMATS:
        m = rx.search(head)
        if m and (best is None or m.start() < best[0]):
            best = (m.start(), name, m)
    if best is None:
        return None
    return _seconds(best[1], best[2])


def line_format(line: str) -> str | None:
    """The name of the format `line_time` would use (for tests and reasons)."""
    head = line[:HEAD]
    found = [(m.start(), name) for name, rx in FORMATS if (m := rx.search(head))]
    return min(found)[1] if found else None


def parser_for(samples: list[str]):
    """A line_time for one log: its commonest format is tried first (one regex, not the
    whole table, for every line), the table only when that fails."""
    names = [n for s in samples if (n := line_format(s))]
    if not names:
        return line_time
    name = max(set(names), key=names.count)
    rx = dict(FORMATS)[name]

    def parse(line: str) -> float | None:
        m = rx.search(line, 0, HEAD)
        if m:
            t = _seconds(name, m)
            if t is not None:
                return t
        return line_time(line)

    return parse
