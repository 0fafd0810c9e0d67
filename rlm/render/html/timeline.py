"""The timeline of a log answer: one lane per event kind or finding group, on the log's own
clock, with a mark where each of its lines falls (a density strip when a lane has many).

Times are read from the evidence lines (code took them from the file) by the one table of
formats (rlm.corpus.timeparse). When any marked line has no readable time, the axis is the
line number, and the page says so. Bursts show as dense marks, silences as empty stretches."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from rlm.corpus.timeparse import as_datetime, has_year, parser_for
from rlm.render.html.axis import axis_html, fmt_time, line_label, round_ticks, short
from rlm.render.html.findings import event_kinds
from rlm.render.html.page import esc

WIDTH = 1000.0
DENSE = 120  # more marks than this in a lane: a density strip (bins) instead of ticks
BINS = 200


@dataclass
class Mark:
    path: str
    line: int
    time: datetime | None = None


@dataclass
class Lane:
    key: str  # the anchor of its findings or rows (#<key>)
    label: str
    count: int  # exact number of lines (may exceed the marks drawn)
    marks: list[Mark] = field(default_factory=list)
    severity: str = ""


def _clock(texts: list[str]):
    """The time of a line on this log's clock: its commonest format first (rlm.corpus.timeparse)."""
    parse = parser_for([t.split("\n", 1)[0] for t in texts[:50] if t])

    def at(text: str) -> datetime | None:
        return as_datetime(parse(text.split("\n", 1)[0])) if text else None
    return at


def _times_by_line(rep: dict) -> dict[tuple[str, int], datetime | None]:
    fs = [f for f in rep.get("findings") or [] if isinstance(f, dict)]
    at = _clock([f.get("evidence") or "" for f in fs])
    out = {}
    for f in fs:
        s = f.get("source") or {}
        out[(s.get("path", ""), int(s.get("line_start") or 0))] = at(f.get("evidence") or "")
    return out


def lanes_of(rep: dict) -> list[Lane]:
    """Event kinds when the report has them, else code's finding groups, else the findings."""
    kinds = event_kinds(rep)
    if kinds:
        at = _clock([e.get("text") or e.get("evidence") or "" for k in kinds
                     for e in k.get("examples") or k.get("lines") or [] if isinstance(e, dict)])
        return [_kind_lane(k, i, at) for i, k in enumerate(kinds, 1)]
    times = _times_by_line(rep)
    lanes = []
    for g in rep.get("groups") or []:
        paths = g.get("paths") or []
        lines = g.get("lines") or []
        marks = [Mark(paths[i] if i < len(paths) else "", ln,
                      times.get((paths[i] if i < len(paths) else "", ln)))
                 for i, ln in enumerate(lines)]
        why = g.get("why") or g.get("claim") or ""
        if g.get("kind") == "identifier":
            why = f"one story: lines sharing {g.get('key')}"
        count = g.get("count") if isinstance(g.get("count"), int) else len(marks)
        lanes.append(Lane(f"g-{g.get('id')}", f"{g.get('id')} · {why}", max(count, len(marks)),
                          marks, g.get("severity") or g.get("label") or ""))
    if lanes:
        return lanes
    marks = []
    for f in rep.get("findings") or []:
        if isinstance(f, dict) and f.get("verified") and f.get("status") != "rejected":
            key = ((f.get("source") or {}).get("path", ""),
                   int((f.get("source") or {}).get("line_start") or 0))
            marks.append(Mark(*key, times.get(key)))
    return [Lane("g-findings", "verified findings", len(marks), marks)] if marks else []


def _kind_lane(k: dict, i: int, at) -> Lane:
    """An event kind (rlm's template table, issue 19): its example lines are the marks."""
    marks = []
    for ex in k.get("examples") or k.get("lines") or []:
        if isinstance(ex, dict):
            marks.append(Mark(ex.get("path", ""), int(ex.get("line") or ex.get("line_start") or 0),
                              at(ex.get("text") or ex.get("evidence") or "")))
    label = k.get("template") or k.get("name") or k.get("kind") or f"kind {i}"
    return Lane(f"kind-{k.get('id') or f'k{i}'}", str(label), int(k.get("count") or len(marks)), marks,
                str(k.get("severity") or ""))


def _axis_lines(rep: dict, lanes: list[Lane]) -> tuple[dict[str, int], int]:
    """Each file's offset on a line axis (files in the coverage map's order) and the total."""
    files = ((rep.get("coverage") or {}).get("map") or {}).get("files") or []
    offsets, at = {}, 0
    for f in files:
        offsets[f.get("path", "")] = at
        at += int(f.get("lines") or 0)
    if not files:  # an older run: one file, or files placed by the last line seen in each
        for ln in lanes:
            for m in ln.marks:
                offsets.setdefault(m.path, 0)
        ends: dict[str, int] = {}
        for ln in lanes:
            for m in ln.marks:
                ends[m.path] = max(ends.get(m.path, 0), m.line)
        if len(ends) == 1:
            return {p: 0 for p in ends}, max(int((rep.get("corpus") or {}).get("lines") or 0),
                                             max(ends.values()))
        for p in ends:
            offsets[p], at = at, at + ends[p]
    return offsets, max(at, 1)


def _strip(lane: Lane, xs: list[tuple[float, str]]) -> str:
    """Ticks, or for a dense lane a histogram of its marks in BINS bins."""
    if len(xs) <= DENSE:
        body = "".join(f'<rect class="mark" x="{max(0.0, x - 1):.2f}" y="2" width="2" height="20" '
                       f'fill="#1d1d1f"><title>{esc(t)}</title></rect>' for x, t in xs)
    else:
        bins = [0] * BINS
        for x, _ in xs:
            bins[min(BINS - 1, int(x / WIDTH * BINS))] += 1
        top = max(bins)
        w = WIDTH / BINS
        body = "".join(  # darker where more lines fall: a burst is a dark band
            f'<rect class="density" x="{i * w:.2f}" y="2" width="{w:.2f}" height="20" '
            f'fill="#1d1d1f" fill-opacity="{0.2 + 0.8 * n / top:.2f}"><title>{n} line'
            f'{"s" if n != 1 else ""}</title></rect>' for i, n in enumerate(bins) if n)
    return (f'<svg class="strip" viewBox="0 0 {WIDTH:.0f} 24" preserveAspectRatio="none" '
            f'role="img" aria-label="{len(xs)} marks">{body}</svg>')


def timeline_section(rep: dict) -> str:
    lanes = [ln for ln in lanes_of(rep) if ln.marks]
    if not lanes:
        return ""
    marks = [m for ln in lanes for m in ln.marks]
    timed = [m.time for m in marks if m.time is not None]
    by_time = len(timed) == len(marks)
    mixed = by_time and len({has_year(t) for t in timed}) > 1  # syslog beside dated files
    by_time = by_time and not mixed
    if by_time:
        t0, t1, ticks, note = _time_span(rep, timed)
        span = max((t1 - t0).total_seconds(), 1e-3)
        pos = {id(m): min(WIDTH, max(0.0, (m.time - t0).total_seconds() / span * WIDTH))
               for m in marks}
    else:
        offsets, total = _axis_lines(rep, lanes)
        pos = {id(m): (offsets.get(m.path, 0) + m.line - 1) / max(total - 1, 1) * WIDTH
               for m in marks}
        ticks = [line_label(1 + round((total - 1) * i / 4), offsets) for i in range(5)]
        why = ("Some files write times without a year and others with one, so they share no "
               "clock" if mixed else "This log has no readable times" if not timed else
               f"{len(marks) - len(timed)} of {len(marks)} marked lines have no readable time")
        note = (f"{why}: the axis is the line number"
                + (" (the files one after another)" if len(offsets) > 1 else "") + ".")
    if event_kinds(rep):  # a profile run recorded before rlm.corpus.lanes, or by a newer one
        note += (" This version cannot read this run's record of where every line of a kind "
                 "falls" if isinstance(rep.get("timeline"), dict) else
                 " This run was recorded before rlm kept where every line of a kind falls")
        note += ": each lane shows only the kind's example lines."
    rows = []
    for ln in lanes:
        xs = [(pos[id(m)], f"{m.path}:{m.line}" + (f" at {m.time}" if m.time else ""))
              for m in ln.marks]
        count = f"{ln.count:,} line{'s' if ln.count != 1 else ''}"
        if ln.count > len(ln.marks):
            count += f" ({len(ln.marks)} drawn)"
        sev = f' <span class="tag">{esc(ln.severity)}</span>' if ln.severity else ""
        rows.append(f'<div class="lane" data-lane="{esc(ln.key)}"><div class="lane-label" '
                    f'title="{esc(ln.label)} ({count})"><span class="muted">{count}</span>{sev} '
                    f'<a href="#{esc(ln.key)}">{esc(short(ln.label))}</a></div>'
                    f"{_strip(ln, xs)}</div>")
    axis = axis_html(ticks)
    # the axis above and below the lanes: a long list of lanes keeps its scale in view
    return (f'<p class="small muted" data-axis="{"time" if by_time else "line"}">{esc(note)}</p>'
            + axis + "".join(rows) + (axis if len(rows) > 8 else ""))


def _time_span(rep: dict, timed: list[datetime]) -> tuple[datetime, datetime, list, str]:
    """The axis's ends, ticks and note: the log's own first and last time when the run
    recorded them (rlm.corpus.lanes) and every mark falls inside; else the marks' own span."""
    a, b = min(timed), max(timed)
    clock = (rep.get("timeline") or {}).get("time") if isinstance(rep.get("timeline"), dict) else None
    if isinstance(clock, dict) and clock.get("last", 0) > clock.get("first", 0):
        t0, t1 = as_datetime(clock["first"]), as_datetime(clock["last"])
        if t0 - timedelta(seconds=1) <= a and b <= t1 + timedelta(seconds=1):
            ends = f"from {clock.get('first_seen') or t0} to {clock.get('last_seen') or t1}"
            return t0, t1, round_ticks(clock["first"], clock["last"]), (
                f"On the log's own clock, {ends}, as the file writes times. Each mark is one "
                "line; dense lanes show how many lines fall in each slice of time.")
    span = max((b - a).total_seconds(), 1e-3)
    return a, b, [fmt_time(a + (b - a) * (i / 4), span, i in (0, 4)) for i in range(5)], (
        "On the log's own clock, from the first to the last line drawn. Each mark is one "
        "line; dense lanes show how many lines fall in each slice of time.")


def _bins_of_runs(runs: list, offset: int, total: int, bins: list[int]) -> int:
    """Add the lines of [a, b] runs (one file at ``offset`` on an axis of ``total`` lines) to
    equal bins; returns how many lines were added."""
    n, size = 0, total / len(bins)
    for run in runs:
        if not (isinstance(run, (list, tuple)) and len(run) == 2):
            continue
        a, b = offset + int(run[0]), offset + int(run[1])
        n += b - a + 1
        i = min(len(bins) - 1, int((a - 1) / size))
        while a <= b:  # spread the run over the bins it crosses
            end = min(b, int((i + 1) * size))
            bins[min(i, len(bins) - 1)] += max(0, end - a + 1)
            a, i = end + 1, i + 1
    return n


def matched_section(rep: dict) -> str:
    """A counting answer's every matching line (``matched.lines``: path -> [[a, b], ...]) as a
    density strip on the line axis: where in the corpus the counted lines are."""
    m = rep.get("matched") if isinstance(rep.get("matched"), dict) else {}
    runs = m.get("lines") if isinstance(m.get("lines"), dict) else {}
    if not runs:
        return ""
    offsets, total = _axis_lines(rep, [Lane("", "", 0, [Mark(p, max(int(r[-1][1]), 1))])
                                       for p, r in runs.items() if r])
    bins = [0] * BINS
    n = sum(_bins_of_runs(r, offsets.get(p, 0), total, bins) for p, r in runs.items())
    top = max(bins) or 1
    w = WIDTH / BINS
    body = "".join(f'<rect class="density" x="{i * w:.2f}" y="2" width="{w:.2f}" height="20" '
                   f'fill="#1d1d1f" fill-opacity="{0.2 + 0.8 * k / top:.2f}"><title>{k:,} line'
                   f'{"s" if k != 1 else ""}</title></rect>' for i, k in enumerate(bins) if k)
    what = m.get("read_as") or m.get("what") or "the lines the answer counted"
    ticks = [line_label(1 + round((total - 1) * i / 4), offsets) for i in range(5)]
    axis = axis_html(ticks)
    return (f'<p class="small muted">{esc(what)}: every one of the {n:,} lines, by line number; '
            "darker where more of them fall.</p>"
            f'<div class="lane" data-lane="matched"><div class="lane-label">{n:,} lines</div>'
            f'<svg class="strip" viewBox="0 0 {WIDTH:.0f} 24" preserveAspectRatio="none" role="img" '
            f'aria-label="{n} counted lines" data-lines="{n}">{body}</svg></div>' + axis)
