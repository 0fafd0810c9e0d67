"""Points in time written in a question: dates, times of day, both, ISO with a zone, epochs.

`find_points(question)` returns each point with its span in the question, so the window
reader (rlm.corpus.timewindow) can see the words around it ("between", "after", "on") and the
query reader can take the window's text out of the question before it looks for anchors
(`Jun 11 2005` must not make `2005` a search term). Forms read:

- dates: `2005-06-11`, `2005/06/11`, `2005.06.11`, `Jun 11 2005`, `June 11, 2005`,
  `11 Jun 2005`, `Jun 11` (no year: the log's own year);
- times: `17:00`, `17:00:05`, `5pm`, `5:30 pm`; a date and a time joined by a space, `T`,
  `at` or a comma; BGL's `2005-06-11-17.32.07`;
- a zone after a time: `Z`, `UTC`, `GMT`, `+02:00`;
- epoch seconds (10 digits starting with 1).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MONTHS = {m: i for i, m in enumerate(
    "jan feb mar apr may jun jul aug sep oct nov dec".split(), 1)}
_MON = (r"(?P<mon>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|"
        r"aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
_YMD = r"(?P<Y>\d{4})[-/.](?P<M>\d{1,2})[-/.](?P<D>\d{1,2})"
_MDY = rf"{_MON}\s+(?P<D2>\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(?P<Y2>\d{{4}}))?"
_DMY = rf"(?P<D3>\d{{1,2}})\s+{_MON.replace('mon>', 'mon3>')}(?:,?\s+(?P<Y3>\d{{4}}))?"
_DATE = rf"(?:{_YMD}|{_MDY}|{_DMY})"
_TIME = r"(?P<h>\d{1,2})(?::(?P<m>\d{2})(?::(?P<s>\d{2})(?:\.\d+)?)?)?\s*(?P<ampm>am|pm)?"
_ZONE = r"(?P<zone>\s?(?:Z|UTC|GMT)(?![\w])|[+-]\d{2}:?\d{2}(?!\d))?"
_BGL = r"(?P<bY>\d{4})-(?P<bM>\d{2})-(?P<bD>\d{2})-(?P<bh>\d{2})\.(?P<bm>\d{2})\.(?P<bs>\d{2})"
_POINT = re.compile(
    rf"(?<![\w.:-])(?:(?P<epoch>1\d{{9}})(?:\.\d+)?(?![\w.:-])"
    rf"|{_BGL}(?:\.\d+)?"
    rf"|{_DATE}(?:(?:T|\s+at\s+|,?\s+)(?P<t>{_TIME}){_ZONE})?"
    rf"|(?P<t2>{_TIME.replace('?P<', '?P<x')}){_ZONE.replace('?P<zone', '?P<xzone')})"
    r"(?![\w:])", re.I)


@dataclass
class Point:
    start: int  # span in the question
    end: int
    text: str
    date: tuple[int | None, int, int] | None = None  # (year or None, month, day)
    sod: int | None = None  # seconds of the day
    seconds: bool = False  # the time named its seconds (a point of one second, not a minute)
    zone: str | None = None
    epoch: int | None = None


def _time(g: dict, p: str = "") -> tuple[int, bool] | None:
    h = g.get(p + "h")
    if h is None:
        return None
    h, m, s = int(h), int(g.get(p + "m") or 0), g.get(p + "s")
    ampm = (g.get(p + "ampm") or "").lower()
    if g.get(p + "m") is None and not ampm:
        return None  # a bare number is not a time
    if ampm == "pm" and h < 12:
        h += 12
    elif ampm == "am" and h == 12:
        h = 0
    if h > 23 or m > 59 or int(s or 0) > 60:
        return None
    return h * 3600 + m * 60 + int(s or 0), s is not None


def _date(g: dict) -> tuple[int | None, int, int] | None:
    if g.get("Y"):
        y, mo, d = int(g["Y"]), int(g["M"]), int(g["D"])
    elif g.get("D2"):
        y, mo, d = (int(g["Y2"]) if g.get("Y2") else None), MONTHS[g["mon"][:3].lower()], int(g["D2"])
    elif g.get("D3"):
        y, mo, d = (int(g["Y3"]) if g.get("Y3") else None), MONTHS[g["mon3"][:3].lower()], int(g["D3"])
    else:
        return None
    return (y, mo, d) if 1 <= mo <= 12 and 1 <= d <= 31 else None


def _point(m: re.Match) -> Point | None:
    g = m.groupdict()
    p = Point(m.start(), m.end(), m.group(0))
    if g.get("epoch"):
        p.epoch = int(g["epoch"])
        return p
    if g.get("bY"):
        p.date = (int(g["bY"]), int(g["bM"]), int(g["bD"]))
        p.sod, p.seconds = int(g["bh"]) * 3600 + int(g["bm"]) * 60 + int(g["bs"]), True
        return p
    if g.get("t2") is not None:
        t = _time(g, "x")
        if t is None:
            return None
        p.sod, p.seconds = t
        p.zone = (g.get("xzone") or "").strip() or None
        return p
    p.date = _date(g)
    if p.date is None:
        return None
    t = _time(g) if g.get("t") else None
    if t is None and g.get("t"):  # "Jun 11 2005 17" is a date then a number
        p.end = p.start + len(m.group(0)) - len(m.group("t")) - len(g.get("zone") or "")
        p.text = m.group(0)[: p.end - p.start].rstrip(" ,")
    elif t is not None:
        p.sod, p.seconds = t
        p.zone = (g.get("zone") or "").strip() or None
    return p


def find_points(question: str) -> list[Point]:
    """The points in time the question writes, in order."""
    out = []
    for m in _POINT.finditer(question):
        p = _point(m)
        if p is not None:
            out.append(p)
    return out


# words that say a window is meant, and what follows them must be a point code can read
WINDOW_WORDS = re.compile(r"\b(between|from|after|since|before|until|till|around|at|on)\s+"
                          r"(\S+(?:\s+\S+)?)", re.I)
