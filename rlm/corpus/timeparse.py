"""Timestamps of log lines: the one tested table of formats (tests/corpus/test_timeparse.py).

Every part of rlm that reads a time from a line uses this module: the profile's clock windows,
time-window questions, counts per hour, and code's own timelines (rlm/pipeline/codeonly/timeline.py).

`line_time(line)` returns seconds since the epoch as if the log's clock were UTC, or None. No
time zone arithmetic: a question's "14:05" means the log's own clock, so a zone suffix
(`Z`, `+02:00`) is read past, not applied. Formats without a year (syslog, logcat, Proxifier)
get YEARLESS, so their times order correctly within a year. The earliest written date-time in the
first HEAD characters wins; an epoch number only when there is none (BGL writes both). A JSON line's time field
(`"ts"`, `"time"`, `"@timestamp"`, ...) is found wherever it is in the record.
"""

from __future__ import annotations

import calendar
import re
from datetime import datetime, timezone

HEAD = 120
JSON_HEAD = 2000
YEARLESS = 2000  # a leap year: Feb 29 parses
_MON = {m: i for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split(), 1)}


def _frac(s: str | None) -> float:
    return float("0." + s) if s else 0.0


# (name, regex); named groups: Y (or y, two digits) M D h m s f, b (month name), e/ms (epoch)
_D = r"(?P<h>\d{2}):(?P<m>\d{2}):(?P<s>\d{2})"
_ZONE = r"(?:\s?(?:Z|UTC|GMT|[+-]\d{2}:?\d{2})(?![\w:]))?"
FORMATS: list[tuple[str, re.Pattern]] = [
    ("epoch_ms", re.compile(r"(?<![\d.])(?P<ms>1\d{12})(?![\d.])")),
    ("epoch", re.compile(r"(?<![\d.:-])(?P<e>1\d{9})(?:\.(?P<f>\d{1,6}))?(?![\d:-])")),
    ("iso", re.compile(r"(?<!\d)(?P<Y>\d{4})-(?P<M>\d{2})-(?P<D>\d{2})[T ](?P<h>\d{2}):(?P<m>\d{2})"
                       r"(?::(?P<s>\d{2})(?:[.,](?P<f>\d{1,9}))?)?(?!\d|:\d)" + _ZONE)),
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
_BY_NAME = dict(FORMATS)
# a JSON record's time field, its value quoted (ISO and others) or a bare epoch number
_JSON_TIME = re.compile(r'"(?:@?timestamp|time|ts|t|datetime|date|eventTime|asctime|created)"'
                        r'\s*:\s*(?:"([^"]{6,40})"|(\d[\d.]{5,20}))')


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
    day, h, mi, s = int(g["D"]), int(g["h"]), int(g["m"]), int(g.get("s") or 0)
    if not (month and 1 <= month <= 12 and 1 <= day <= 31 and h < 24 and mi < 60 and s <= 60):
        return None
    try:
        t = calendar.timegm((year, month, day, h, mi, s, 0, 0, 0))
    except (ValueError, OverflowError):
        return None
    if name == "healthapp":  # its last field is milliseconds, not a decimal fraction
        return t + int(g.get("f") or 0) / 1000.0
    return t + _frac(g.get("f"))


def _earliest(text: str) -> tuple[str, re.Match] | None:
    """The earliest written date-time; an epoch number only when the line writes none (BGL
    writes both: its own clock is the written one, so times are shown as the file shows them)."""
    best: tuple[int, str, re.Match] | None = None
    epoch: tuple[int, str, re.Match] | None = None
    for name, rx in FORMATS:
        m = rx.search(text)
        if not m:
            continue
        if name.startswith("epoch"):
            epoch = epoch if epoch and epoch[0] <= m.start() else (m.start(), name, m)
        elif best is None or m.start() < best[0]:
            best = (m.start(), name, m)
    best = best or epoch
    return (best[1], best[2]) if best else None


def _json_field(line: str) -> tuple[str, re.Match] | None:
    m = _JSON_TIME.search(line, 0, JSON_HEAD)
    return _earliest(m.group(1) or m.group(2)) if m else None


def _find(line: str) -> tuple[str, re.Match] | None:
    if line.lstrip().startswith("{"):
        got = _json_field(line)
        if got:
            return got
    return _earliest(line[:HEAD])


def written_time(line: str) -> str | None:
    """The line's timestamp as the file writes it (`2005-06-11-17.32.07.581048`,
    `Dec 10 06:55:46`): times are shown as written, never moved to another zone."""
    got = _find(line)
    return got[1].group(0).strip(" []") if got else None


def line_time(line: str) -> float | None:
    """Seconds (log clock as UTC) of the line's timestamp, or None."""
    got = _find(line)
    return _seconds(*got) if got else None


def line_format(line: str) -> str | None:
    """The name of the format `line_time` would use (for tests and reasons); a JSON line's
    time field is `json:` + the format of its value."""
    got = _find(line)
    if not got:
        return None
    return ("json:" + got[0]) if line.lstrip().startswith("{") and _json_field(line) else got[0]


def _written(line: str) -> tuple[str, re.Match] | None:
    """The format and match of the line's timestamp as written: a date and time rather than
    an epoch number beside it (BGL: `2005-06-11-17.32.07`, not `1118536327`)."""
    got = _find(line)
    if got and got[0].startswith("epoch"):
        head = line[:HEAD]
        spans = [(name, m) for name, rx in FORMATS if not name.startswith("epoch")
                 and (m := rx.search(head))]
        if spans:
            return min(spans, key=lambda nm: nm[1].start())
    return got


def time_text(line: str) -> str | None:
    """The line's timestamp as the file writes it, or None."""
    got = _written(line)
    return got[1].group(0).strip() if got else None


def text_reader_for(samples: list[str]):
    """A time_text for one log: its commonest written format first (one regex a line)."""
    names = [got[0] for s in samples if (got := _written(s))]
    if not names:
        return time_text
    rx = _BY_NAME[max(set(names), key=names.count)]

    def read(line: str) -> str | None:
        m = rx.search(line, 0, HEAD)
        return m.group(0).strip() if m else time_text(line)

    return read


def as_datetime(t: float | None) -> datetime | None:
    """The log's clock as a naive datetime (for wording: `when`)."""
    if t is None:
        return None
    return datetime.fromtimestamp(t, timezone.utc).replace(tzinfo=None)


def has_year(t: datetime) -> bool:
    return t.year != YEARLESS


def parser_for(samples: list[str]):
    """A line_time for one log: its commonest format is tried first (one regex, not the
    whole table, for every line), the table only when that fails."""
    names = [n for s in samples if (n := line_format(s))]
    if not names:
        return line_time
    name = max(set(names), key=names.count)
    if name.startswith("json:"):
        return line_time
    rx = _BY_NAME[name]

    def parse(line: str) -> float | None:
        m = rx.search(line, 0, HEAD)
        if m:
            t = _seconds(name, m)
            if t is not None:
                return t
        return line_time(line)

    return parse
