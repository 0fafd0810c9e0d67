"""Code's own wording of what it found: when, where (component), how often, and why picked.

Used for profile groups and grep hits. Everything here comes from the lines themselves; nothing
is inferred. Timestamps are read by the one table of formats (rlm/corpus/timeparse.py); lines
without one are placed by line number only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from rlm.render.safetext import visible
from rlm.corpus.timeparse import as_datetime, has_year, line_time, written_time
from rlm.engine.candidates import message_of, template_of

_COMPONENT = re.compile(r"^\S+\s+(?:[A-Z]+\s+)?\[([\w.:/-]{1,40})\]|"
                        r"\b(?:component|service|svc|logger|module)=([\w.:/-]{1,40})")
_SYSLOG_REST = re.compile(r"^\S+ (?=[\w./()-]{1,40}(?:\[\d+\])?: )")  # the host after a syslog time
_SYSLOG_PROC = re.compile(r"^[A-Z][a-z]{2} +\d{1,2} [\d:]{8} \S+ ([\w./-]{1,40})(?:\[\d+\])?:")


def timestamp(line: str) -> datetime | None:
    """The time of a log line on the log's own clock, when there is one we can read exactly."""
    return as_datetime(line_time(line))


def when(t: datetime | None) -> str:
    if t is None:
        return "?"
    s = t.strftime("%H:%M:%S on %b %d")
    return s + f" {t.year}" if has_year(t) else s


def span(a: datetime | None, b: datetime | None) -> str:
    """'3 h 12 min', '5 days 8 h', '42 s'."""
    if a is None or b is None:
        return ""
    s = int(abs((b - a).total_seconds()))
    d, s = divmod(s, 86400)
    h, s = divmod(s, 3600)
    mi, s = divmod(s, 60)
    if d:
        return f"{d} day{'s' if d != 1 else ''} " + (f"{h} h" if h else f"{mi} min")
    if h:
        return f"{h} h {mi} min"
    if mi:
        return f"{mi} min {s} s"
    return f"{s} s"


def component(line: str) -> str | None:
    """The emitting component: `[checkout]` after the level, component=..., or the syslog tag."""
    m = _COMPONENT.search(line[:300])
    if m:
        return m.group(1) or m.group(2)
    m = _SYSLOG_PROC.match(line)
    return m.group(1) if m else None


@dataclass
class Step:
    line: int
    path: str
    when: datetime | None
    text: str  # what the line says, without timestamp and level
    shape: str  # the line's template (digits and key=values masked)
    stamp: str | None = None  # the timestamp as the file writes it


def _message(text: str, width: int) -> str:
    """What the line says: its timestamp, syslog host and level dropped."""
    stamp = written_time(text)
    if stamp and text.lstrip(" [").startswith(stamp):
        text = text.split(stamp, 1)[1].lstrip(" ]")
        if _SYSLOG_REST.match(text):
            text = _SYSLOG_REST.sub("", text, 1)
    return message_of(text, width)


def steps(items: list[tuple[str, int, str]]) -> list[Step]:
    """(path, line number, line text) -> steps in file order (per path, as given)."""
    out = []
    for path, ln, text in items:
        msg = _message(text, 160)
        out.append(Step(ln, path, timestamp(text), msg, template_of(_message(text, 400)),
                        written_time(text)))
    return out


def repeats(ss: list[Step]) -> list[tuple[Step, int, list[int]]]:
    """Shapes seen more than once: (first step, count, line numbers), most frequent first."""
    by: dict[str, list[Step]] = {}
    for s in ss:
        by.setdefault(s.shape, []).append(s)
    rep = [(v[0], len(v), [x.line for x in v]) for v in by.values() if len(v) > 1]
    return sorted(rep, key=lambda r: (-r[1], r[2][0]))


def time_range(ss: list[Step]) -> tuple[datetime | None, datetime | None]:
    ts = [s.when for s in ss if s.when is not None]
    return (min(ts), max(ts)) if ts else (None, None)


def between(ss: list[Step]) -> str:
    """The steps' time span, its ends written as the file writes its times."""
    a, b = time_range(ss)
    if a is None:
        return f"between lines {ss[0].line:,} and {ss[-1].line:,}" if len(ss) > 1 else \
            f"at line {ss[0].line:,}"
    wa = next((s.stamp for s in ss if s.when == a and s.stamp), None) or when(a)
    wb = next((s.stamp for s in ss if s.when == b and s.stamp), None) or when(b)
    if a == b:
        return f"at {wa}"
    return f"between {wa} and {wb} ({span(a, b)})"


def _short(text: str, drop: list[str], width: int = 60) -> str:
    t = re.sub(r"^\[[\w.:/-]+\]\s*", "", text)
    for d in drop:  # the shared id itself, and `key=` left without its value
        t = re.sub(r"\b[\w.-]+=" + re.escape(d) + r"(?![\w-])", "", t)
        t = t.replace(d, "").strip()
    t = re.sub(r"\s{2,}", " ", t).strip(" :,;=")
    return t if len(t) <= width else t[:width] + "…"


def around(text: str, anchors: list[str], width: int = 160) -> str:
    """What a long hit line says around its anchor: the line's start when the anchor is in it,
    else the words from just before the anchor on (a key's value follows the key; cutting the
    line at its start would drop both)."""
    msg = message_of(text, 100_000)
    if len(msg) <= width:
        return msg
    at = min((i for a in anchors if (i := msg.find(a)) >= 0), default=-1)
    if at < 0 or at + len(msg[at:].split(" ", 1)[0]) <= width - 30:
        return msg[:width] + "…"
    start = msg.rfind(". ", 0, at)  # from the sentence that holds the anchor
    start = start + 2 if start >= 0 and at - start <= width // 2 else max(0, at - width // 4)
    return "…" + msg[start:start + width] + ("…" if start + width < len(msg) else "")


def grep_timeline(items: list[tuple[str, int, str]], anchors: list[str],
                  limit: int = 40, in_findings: bool = True) -> list[str]:
    """The hits as an ordered timeline, with the time span and what repeats (Markdown lines)."""
    ss = steps(items)
    if not ss:
        return []
    what = ", ".join(anchors)
    seen: dict[str, int] = {}
    arrows = []
    for s in ss[:12]:
        seen[s.shape] = seen.get(s.shape, 0) + 1
        short = _short(s.text, [], 50)  # the searched text stays in the excerpt
        arrows.append(short + (" again" if seen[s.shape] > 1 else ""))
    more = f" → … ({len(ss) - 12} more)" if len(ss) > 12 else ""
    out = [f"{len(ss)} line{'s' if len(ss) != 1 else ''} mention{'s' if len(ss) == 1 else ''} "
           f"{what} {between(ss)}: " + " → ".join(arrows) + more + "."]
    rep = repeats(ss)
    if rep:
        out.append("What repeats: " + "; ".join(
            f"“{_short(s.text, [], 70)}” ×{n} (lines {', '.join(f'{x:,}' for x in lns[:6])}"
            f"{', …' if len(lns) > 6 else ''})" for s, n, lns in rep[:5]) + ".")
    out.append("Timeline (found by code, in file order):")
    multi = len({s.path for s in ss}) > 1
    full = {(path, ln): text for path, ln, text in items}
    for i, s in enumerate(ss[:limit], 1):
        where = f"{visible(s.path)}:{s.line}" if multi else f"line {s.line:,}"
        text = around(full.get((s.path, s.line), s.text), anchors)
        out.append(f"{i}. {s.stamp or (when(s.when) if s.when else '-')} · {where} · {text}")
    if len(ss) > limit:
        out.append(f"({limit} of {len(ss)} hits shown" + (
            "; every hit is in the JSON report's findings)" if in_findings else ")"))
    return out


def describe_group(kind: str, key: str, why: str, items: list[tuple[str, int, str]]) -> str:
    """Code's claim for a profile group: count, first/last time, component(s), the shared id,
    and the rule that picked the lines."""
    ss = steps(items)
    comps = list(dict.fromkeys(c for _, _, t in items if (c := component(t))))
    comp = (f" from {', '.join(comps[:3])}" + (f" (+{len(comps) - 3})" if len(comps) > 3 else "")
            if comps else "")
    n = len(ss)
    if kind == "identifier":
        order = " → ".join(_short(s.text, [key], 45) for s in ss[:8])
        return (f"{n} lines{comp} share {key}, {between(ss)}, in order: {order}"
                f"{' → …' if n > 8 else ''} (picked: {why})")
    first = _short(ss[0].text, [], 90)
    return f"{n} line{'s' if n != 1 else ''}{comp} {between(ss)}: “{first}” (picked: {why})"
