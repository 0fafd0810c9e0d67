"""The shared axis of the timeline's lanes: tick labels on the log's clock or on line numbers."""

from __future__ import annotations

import calendar
from datetime import datetime

from rlm.corpus.timeparse import as_datetime, has_year
from rlm.render.html.page import esc


def fmt_time(t: datetime, span_s: float, edge: bool) -> str:
    if span_s < 120:
        s = t.strftime("%H:%M:%S.%f")[:-3]
    elif span_s < 86400:
        s = t.strftime("%H:%M:%S")
    else:
        s = t.strftime("%b %d %H:%M")
    return s + (f" {t.year}" if edge and has_year(t) and span_s >= 86400 else "")


def line_label(g: int, offsets: dict[str, int]) -> str:
    """A place on the line axis: 'line 1,200', or 'file.log:200' when files follow each other."""
    if len(offsets) <= 1:
        return f"line {g:,}"
    path, off = max(((p, o) for p, o in offsets.items() if o < g), key=lambda x: x[1],
                    default=next(iter(offsets.items())))
    return f"{path.rsplit('/', 1)[-1]}:{g - off:,}"


def short(text: str, width: int = 90) -> str:
    t = " ".join(text.split())
    return t if len(t) <= width else t[:width] + "…"


STEPS_S = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200,
           86400, 2 * 86400, 7 * 86400, 14 * 86400, 30 * 86400, 91 * 86400, 182 * 86400,
           365 * 86400]


def round_ticks(t0: float, t1: float, most: int = 7) -> list[tuple[float, str]]:
    """(place 0..1, label) of round times on [t0, t1]: whole seconds, minutes, hours or days,
    at most `most` of them, so the labels read like a clock ("06:00", "Mar 05")."""
    span = max(t1 - t0, 1e-9)
    if span > 60 * 86400:
        return _month_ticks(t0, t1, most)
    step = next((s for s in STEPS_S if span / s <= most), STEPS_S[-1])
    if step >= 86400:
        fmt = "%b %d %Y" if span > 300 * 86400 else "%b %d"
    else:
        fmt = "%H:%M:%S" if step < 60 else "%H:%M"
        if span > 86400 or as_datetime(t0).date() != as_datetime(t1).date():
            fmt = "%b %d " + fmt
    out, t = [], -(-t0 // step) * step
    while t <= t1 and len(out) < most + 1:
        d = as_datetime(t)
        out.append(((t - t0) / span, d.strftime(fmt.replace(" %Y", "") if not has_year(d) else fmt)))
        t += step
    return out


def _month_ticks(t0: float, t1: float, most: int) -> list[tuple[float, str]]:
    """The first of every 1, 2, 3, 6 or 12 months on [t0, t1]."""
    a, b = as_datetime(t0), as_datetime(t1)
    months = (b.year - a.year) * 12 + b.month - a.month + 1
    every = next((k for k in (1, 2, 3, 6, 12) if months / k <= most), 12 * (months // (12 * most) + 1))
    out, y, m = [], a.year, a.month
    while True:
        m += 1
        if m > 12:
            y, m = y + 1, 1
        if (m - 1) % every:
            continue
        t = calendar.timegm((y, m, 1, 0, 0, 0))
        if t > t1:
            return out
        d = as_datetime(t)
        out.append(((t - t0) / (t1 - t0), d.strftime("%b %Y" if has_year(d) and (m == 1 or not out)
                                                     else "%b")))


def axis_html(ticks: list) -> str:
    """Labels on the strip's width (beside the lanes' label column): five strings spread at
    0, 25, 50, 75 and 100%, or (place 0..1, label) pairs."""
    if ticks and isinstance(ticks[0], str):
        spans = "".join(f'<span style="left:{i * 25}%">{esc(t)}</span>'
                        for i, t in enumerate(ticks))
    else:
        # a label near an end is anchored inside the strip, so a narrow window never scrolls
        # a tick line at the exact place; a label near an end starts or ends there instead of
        # centring on it, so it stays inside the strip (a narrow window never scrolls)
        spans = "".join(f'<i style="left:{p * 100:.2f}%"></i><span class="at" style="left:'
                        f'{p * 100:.2f}%;transform:translateX('
                        f'{0 if p < 0.12 else -100 if p > 0.88 else -50}%)">{esc(t)}</span>'
                        for p, t in ticks)
    return ('<div class="axis" aria-hidden="true"><div></div><div class="ticks">' + spans
            + "</div></div>")
