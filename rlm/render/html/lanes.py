"""The timeline of a log answer from where code recorded every line of each event kind
(the report's `timeline`, rlm.corpus.lanes): one lane per kind on one shared axis.

The axis is the log's own clock, from its first to its last time, the ends labelled as the
file writes them; a log with no readable times stands on line numbers and the page says why.
A lane of few lines has a tick for each line; a bigger one a density strip of the recorded bins
(darker where more of its lines fall, five shades, each with its range on hover), so a burst is
a dark band and a silence a gap. A lane placed by block or by its examples only says so.

Runs recorded before the record existed are drawn by rlm.render.html.timeline (examples)."""

from __future__ import annotations

from rlm.corpus.clock import duration
from rlm.corpus.lanes import KINDS_MAX
from rlm.corpus.timeparse import as_datetime, has_year
from rlm.render.html.axis import axis_html, fmt_time, line_label, round_ticks, short
from rlm.render.html.findings import event_kinds
from rlm.render.html.page import esc

WIDTH = 1000.0
SHADES = 5  # density levels: one path each, so a dense lane costs bytes per run, not per bin
LANES_MAX = KINDS_MAX  # lanes drawn (as many as recorded); the table lists every kind
PLACED = {"blocks": "placed by the block of the file they are in (exact per block)",
          "examples": "only its example lines were recorded: the rest are not drawn"}


def recorded(rep: dict) -> dict | None:
    """The report's lanes record when this renderer knows its version and it has kinds."""
    tl = rep.get("timeline")
    if isinstance(tl, dict) and tl.get("version") == 1 and isinstance(tl.get("kinds"), dict):
        return tl
    return None


class Axis:
    """Positions (0..WIDTH) of lines or times on the shared axis, and its five labels."""

    def __init__(self, tl: dict):
        self.time = tl.get("time") if isinstance(tl.get("time"), dict) else None
        self.lines = max(1, int(tl.get("lines") or 1))
        self.offsets: dict[str, int] = {}
        at = 0
        for f in tl.get("files") or []:
            self.offsets[str(f.get("path", ""))] = at
            at += int(f.get("lines") or 0)

    def x(self, line: int, t: float | None) -> float:
        if self.time is not None and t is not None:
            t0, t1 = self.time["first"], self.time["last"]
            return max(0.0, min(WIDTH, (t - t0) / max(t1 - t0, 1e-9) * WIDTH))
        return (line - 1) / max(self.lines - 1, 1) * WIDTH

    def where(self, line: int) -> str:
        """``path:line`` of a global line number (a folder's files follow each other)."""
        path, off = "", 0
        for p, o in self.offsets.items():
            if o < line:
                path, off = p, o
        return f"{path}:{line - off:,}"

    def slice_text(self, bins: int) -> str:
        """What one bin of a density strip spans: " (7 min each)", " (3,000 lines each)"."""
        if self.time is not None:
            return f" ({duration((self.time['last'] - self.time['first']) / bins)} each)"
        return f" ({max(1, round(self.lines / bins)):,} lines each)"

    def ticks(self) -> list[str]:
        if self.time is None:
            return [line_label(1 + round((self.lines - 1) * i / 4), self.offsets) for i in range(5)]
        t0, t1 = self.time["first"], self.time["last"]
        return round_ticks(t0, t1)

    def span_text(self) -> str:
        """The clock's ends as the file writes them: "from X to Y (3 days 4 h)"."""
        t = self.time or {}
        a = t.get("first_seen") or fmt_time(as_datetime(t["first"]), 1e9, True)
        b = t.get("last_seen") or fmt_time(as_datetime(t["last"]), 1e9, True)
        return f"from {a} to {b} ({duration(t['last'] - t['first'])})"


def _ticks(axis: Axis, marks: list) -> str:
    out = []
    for m in marks:
        line, t = int(m[0]), (m[1] if len(m) > 1 else None)
        when = f" at {_stamp(t)}" if t is not None else ""
        out.append(f'<rect class="mark" x="{max(0.0, axis.x(line, t) - 1):.1f}" y="2" width="2" '
                   f'height="20"><title>{esc(axis.where(line))}{esc(when)}</title></rect>')
    return "".join(out)


def _stamp(t: float) -> str:
    d = as_datetime(t)
    return d.strftime("%Y-%m-%d %H:%M:%S" if has_year(d) else "%b %d %H:%M:%S")


def _density(bins: list[int], slice_text: str = "") -> str:
    """One path per shade: runs of bins of the same shade as rectangles."""
    top = max(bins, default=0)
    if top <= 0:
        return ""
    w = WIDTH / len(bins)
    runs: dict[int, list[str]] = {}
    ranges: dict[int, tuple[int, int]] = {}
    i = 0
    while i < len(bins):
        n = bins[i]
        if n <= 0:
            i += 1
            continue
        level = max(1, -(-n * SHADES // top))  # any line shows; the fullest bin is darkest
        j = i
        while j + 1 < len(bins) and bins[j + 1] > 0 and max(1, -(-bins[j + 1] * SHADES // top)) == level:
            j += 1
        runs.setdefault(level, []).append(f"M{i * w:.1f} 2h{(j - i + 1) * w:.1f}v20h-{(j - i + 1) * w:.1f}z")
        lo, hi = ranges.get(level, (n, n))
        ranges[level] = (min([lo] + bins[i:j + 1]), max([hi] + bins[i:j + 1]))
        i = j + 1
    return "".join(
        f'<path class="density d{lv}" data-level="{lv}" fill-opacity="{0.15 + 0.85 * lv / SHADES:.2f}" '
        f'd="{"".join(ds)}"><title>{_range(*ranges[lv])} in each of these slices'
        f"{esc(slice_text)}</title></path>" for lv, ds in sorted(runs.items()))


def _range(lo: int, hi: int) -> str:
    return f"{lo:,} line{'s' if lo != 1 else ''}" if lo == hi else f"{lo:,}–{hi:,} lines"


def _strip(axis: Axis, lane: dict, count: int) -> str:
    extra = ""
    if "marks" in lane:
        body = _ticks(axis, [m for m in lane["marks"] if isinstance(m, list) and m])
    else:
        bins = lane.get("time_bins") if axis.time is not None else lane.get("line_bins")
        counts = [int(n) for n in bins or []]
        body = _density(counts, axis.slice_text(len(counts) or 1))
        if counts:  # the page's script shows the slice under the pointer with its exact count
            a, b = ((axis.time["first"], axis.time["last"]) if axis.time else (1, axis.lines))
            extra = (f' data-bins="{",".join(map(str, counts))}" data-from="{a}" data-to="{b}" '
                     f'data-unit="{"time" if axis.time else "line"}"')
    return (f'<svg class="strip" viewBox="0 0 {WIDTH:.0f} 24" preserveAspectRatio="none" '
            f'role="img" aria-label="{count} lines"{extra}>{body}</svg>')


def _lane(axis: Axis, k: dict, lane: dict) -> str:
    key = f"kind-{k.get('id')}"
    count = int(k.get("count") or lane.get("count") or 0)
    text = f"{count:,} line{'s' if count != 1 else ''}"
    placed = lane.get("placed")
    if placed == "examples":
        text += f" ({len(lane.get('marks') or [])} drawn)"
    why = f" — {PLACED[placed]}" if placed in PLACED else ""
    sev = f' <span class="tag">{esc(k.get("severity"))}</span>' if k.get("severity") else ""
    label = str(k.get("template") or key)
    return (f'<div class="lane" data-lane="{esc(key)}" data-placed="{esc(placed or "")}">'
            f'<div class="lane-label" title="{esc(label)} ({text}{why})"><span class="muted">'
            f'{text}</span>{sev} <a href="#{esc(key)}">{esc(short(label))}</a></div>'
            f"{_strip(axis, lane, count)}</div>")


def _note(tl: dict, axis: Axis, drawn: int, total: int) -> str:
    if axis.time is not None:
        note = (f"On the log's own clock, {axis.span_text()}, as the file writes times. A lane of few lines "
                "has a tick per line; a bigger one is shaded where its lines fall, darker where "
                "more of them do: every line of each kind is counted.")
    else:
        why = tl.get("no_time") or "this log has no readable times"
        note = (f"{why[0].upper()}{why[1:]}: the axis is the line number"
                + (" (the files one after another)" if len(axis.offsets) > 1 else "") + ".")
    if tl.get("window"):
        note += " Only the lines inside the question's time window are counted."
    placed = {p for p in (v.get("placed") for v in tl["kinds"].values()) if p in PLACED}
    for p in sorted(placed):
        note += f" Some lanes are {PLACED[p].split(':')[0]}." if p == "blocks" else (
            " Some lanes hold only their example lines (the log is too big to place every line).")
    if drawn < total:
        note += f" The first {drawn} of {total} kinds are drawn; the table lists them all."
    return note


def lanes_section(rep: dict) -> str:
    """The timeline from the recorded lanes; "" when the run has no such record."""
    tl = recorded(rep)
    kinds = [k for k in event_kinds(rep) if str(k.get("id")) in (tl or {}).get("kinds", {})]
    if tl is None or not kinds:
        return ""
    try:
        axis = Axis(tl)
        rows = [_lane(axis, k, tl["kinds"][str(k.get("id"))]) for k in kinds[:LANES_MAX]]
    except (TypeError, ValueError, KeyError, AttributeError):
        return ""  # a record this renderer cannot read: the examples are drawn instead
    axis_row = axis_html(axis.ticks())
    total = len(event_kinds(rep))  # the record holds the first kinds only (rlm.corpus.lanes)
    return (f'<p class="small muted" data-axis="{"time" if axis.time else "line"}">'
            f"{esc(_note(tl, axis, len(rows), total))}</p>"
            + axis_row + "".join(rows) + (axis_row if len(rows) > 8 else ""))
