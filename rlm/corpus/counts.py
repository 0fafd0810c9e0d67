"""Counting questions about logs, answered by code: exact numbers, example lines, no model.

"how many X?", "how many X per Y?" and "most common errors?" become a CountQuery: what to
match (a quoted string or id, a level such as errors or warnings, or the content words of X)
and what to group by (hour, minute, day, component, host, level, shape, or a `key=value`
field such as user or status). `count_lines` scans the file once, block by block (a C-level
regex finds the candidate lines, code checks each one), and returns totals, groups and the
first line of every group as its example. This is separate from model-extracted aggregation
(rlm/pipeline/aggregate_map.py): here every number is a count of lines code matched.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Callable, Iterator

from rlm.corpus.counter import hit_lines
from rlm.corpus.grep import extract_anchors
from rlm.corpus.mask import MASK_RE
from rlm.corpus.severity import ERROR_RANK, severity, severity_name
from rlm.corpus.signals import component
from rlm.corpus.timeparse import line_time, parser_for

TOP = 20
_HOW_MANY = re.compile(r"\b(?:how many|number of|count(?: of)?|total(?: number of)?)\s+(.+?)"
                       r"(?:\s+(?:per|by|for each|each)\s+(\w+))?\s*(?:\?|$|\bin\b|\bare\b|\bwere\b"
                       r"|\bdid\b|\bhappened\b|\boccurred\b|\bbetween\b|\baround\b|\bafter\b|"
                       r"\bbefore\b|\bat\b|\bon\b|\bfrom\b)", re.I)
_TOP = re.compile(r"\b(?:most (?:common|frequent)|top|commonest|most often)\s+(?:\d+\s+)?(\w+(?: \w+)?)",
                  re.I)
_PER = re.compile(r"\b(?:per|by|for each|each)\s+(\w+)", re.I)
_STOP = {"the", "a", "an", "of", "in", "log", "logs", "file", "there", "were", "are", "is", "times",
         "we", "did", "do", "have", "had", "get", "got", "lines", "line", "entries", "entry",
         "messages", "message", "events", "event", "records", "record", "occurrences", "this"}
_ERRORS = {"error", "errors", "failure", "failures", "problem", "problems", "fatal", "crash",
           "crashes", "exception", "exceptions"}
_WARNINGS = {"warning", "warnings", "warn", "warns"}
_ALL = {"lines", "line", "entries", "records", "events", "messages", "requests"}
# prefilters (case-sensitive literals: ~200 MB/s in Python's re); code checks every hit
_ERR_WORDS = (rb"ERR|FATAL|CRIT|SEVERE|PANIC|EMERG|ALERT|FAILURE|\[error\]|\[crit|\[alert|\[emerg"
              rb"|<[0-3]>|, Error |\"(?:error|fatal|critical|crit|emerg|alert|panic)\"")
_WARN_WORDS = rb"WARN|\[warn|<4>|, Warning |\"warn(?:ing)?\""
_LOGCAT_LINE = re.compile(r"^\d{2}-\d{2} [\d:.]+ +\d+ +\d+ [VDIWEFA] |^[VDIWEFA]/")
_LOGCAT_LEVEL = {"err": rb"|^[EFA]/| [EFA] ", "warn": rb"|^W/| W "}
TIME_UNITS = {"hour": 13, "hours": 13, "minute": 16, "minutes": 16, "day": 10, "days": 10,
               "second": 19, "seconds": 19}
_COMPONENTS = {"component", "components", "service", "services", "module", "logger", "class",
               "process", "program", "daemon", "source", "facility"}
_HOSTS = {"host", "hosts", "node", "nodes", "server", "servers", "machine", "machines"}
_IP = re.compile(r"\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b")


@dataclass
class CountQuery:
    kind: str  # count | top
    what: str  # X, as the answer words it
    prefilter: re.Pattern | str | None  # bytes regex for candidate lines, "err" / "warn"
    # (level words, chosen per file: logcat letters only in logcat files), None: every line
    check: Callable[[str], bool]  # the exact test of one line
    by: str | None = None  # what to group by (see group_key)


@dataclass
class CountResult:
    total: int = 0
    scanned: int = 0  # lines scanned
    groups: dict[str, list[int]] = field(default_factory=dict)  # key -> [count, first line]
    examples: list[int] = field(default_factory=list)  # first matching lines (up to 10)

    def top(self, n: int = TOP) -> list[tuple[str, int, int]]:
        return sorted(((k, c, ln) for k, (c, ln) in self.groups.items()), key=lambda x: (-x[1], x[2]))[:n]


def _stem(w: str) -> str:
    w = w.lower()
    for suf in ("ing", "ed", "es", "s"):
        if len(w) > len(suf) + 2 and w.endswith(suf):
            return w[: -len(suf)]
    return w


def _match_for(x: str, question: str) -> tuple[str, re.Pattern | str | None,
                                               Callable[[str], bool]] | None:
    anchors = extract_anchors(question)
    if anchors:
        lits = [a.lower() for a in anchors]
        rx = re.compile(b"|".join(re.escape(a.encode()) for a in anchors), re.I)
        return " or ".join(repr(a) for a in anchors), rx, lambda s: any(a in s.lower() for a in lits)
    words = [w for w in re.findall(r"[\w.-]+", x.lower()) if w not in _STOP]
    if not words or set(words) <= _ALL:
        return "lines", None, lambda s: True
    if set(words) & _ERRORS and len(words) <= 2:
        return "error lines (level error or worse)", "err", _is_error
    if set(words) & _WARNINGS and len(words) <= 2:
        return "warning lines", "warn", lambda s: severity(s) == 4
    stems = [_stem(w) for w in words]
    rx = re.compile(rb"(?i)\b" + re.escape(max(stems, key=len).encode()))
    res = [re.compile(r"(?i)\b" + re.escape(s)) for s in stems]
    return ("lines with " + " and ".join(repr(s) for s in stems)), rx, (
        lambda s: all(r.search(s) for r in res))


def _is_error(s: str) -> bool:
    sev = severity(s)
    return sev is not None and sev <= ERROR_RANK


def parse_count(question: str) -> CountQuery | None:
    """The counting question in `question`, or None."""
    m = _TOP.search(question)
    if m:
        got = _match_for(m.group(1), question) or ("lines", None, lambda s: True)
        return CountQuery("top", got[0], got[1], got[2], "shape")
    m = _HOW_MANY.search(question)
    if not m:
        return None
    got = _match_for(m.group(1), question)
    if got is None:
        return None
    by = m.group(2) or ((p := _PER.search(question)) and p.group(1))
    return CountQuery("count", got[0], got[1], got[2], by.lower() if by else None)


def group_key(by: str, line: str, when: Callable[[str], float | None] = line_time) -> str:
    """The value of `by` for one line ("(none)" when the line has none). `when` parses the
    line's time (a per-log parser from rlm.corpus.timeparse.parser_for is faster)."""
    if by in TIME_UNITS:
        t = when(line)
        if t is None:
            return "(no time)"
        return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t))[: TIME_UNITS[by]]
    if by == "shape":
        return MASK_RE.sub(b"#", line.encode()).decode("utf-8", "replace")
    if by in ("level", "levels", "severity"):
        return severity_name(severity(line))
    if by in _COMPONENTS:
        return component(MASK_RE.sub(b"#", line.encode()).decode("utf-8", "replace")) or "(none)"
    if by in _HOSTS:
        m = re.match(r"^\w{3} +\d+ [\d:]{8} (\S+)", line) or re.search(
            r"\b(?:host|node|hostname)=(\S+)", line)
        return m.group(1) if m else "(none)"
    if by in ("ip", "ips", "address", "client", "clients"):
        m = _IP.search(line)
        return m.group(0) if m else "(none)"
    key = by[:-1] if by.endswith("s") and len(by) > 3 else by
    m = re.search(rf"\b{re.escape(key)}\w*[=:]\s*\"?([^\s\",;]+)", line, re.I)
    return m.group(1) if m else "(none)"


def _candidate_lines(src, rx: re.Pattern | None, first: int, last: int) -> Iterator[tuple[int, str]]:
    """(line number, text) of lines first..last whose bytes match rx (every line if None)."""
    a, _ = src.line_span(first, first)
    _, b = src.line_span(last, last)
    data = src.data
    step = 1 << 22
    ln = first
    pos = a
    while pos < b:
        end = min(b, pos + step)
        if end < b:
            nl = data.rfind(b"\n", pos, end)
            end = nl + 1 if nl >= pos else end
        block = bytes(data[pos:end])
        if rx is None:
            for i, raw in enumerate(block.rstrip(b"\n").split(b"\n")):
                yield ln + i, raw.decode("utf-8", "replace")
        else:
            for i, raw in hit_lines(block, rx):
                yield ln + i, raw.decode("utf-8", "replace")
        ln += block.count(b"\n")
        pos = end


def count_lines(src, cq: CountQuery, ranges: list[tuple[int, int]] | None = None,
                res: CountResult | None = None, where=None) -> CountResult:
    """Count the lines of `src` (within `ranges`, default all) that `cq` matches, grouped.
    `where(line)` names a line's group key prefix (a folder's file), default none."""
    res = res or CountResult()
    rx = cq.prefilter
    if isinstance(rx, str):  # level words; logcat's one-letter levels only in logcat files
        words = _ERR_WORDS if rx == "err" else _WARN_WORDS
        logcat = src.line_count and _LOGCAT_LINE.match(src.line(1, 200))
        rx = re.compile(words + (_LOGCAT_LEVEL[rx] if logcat else b""), re.M)
    when = parser_for(src.lines(1, min(src.line_count, 50), 200)) if cq.by in TIME_UNITS else line_time
    for first, last in ranges or [(1, src.line_count)]:
        if last < first:
            continue
        res.scanned += last - first + 1
        for n, text in _candidate_lines(src, rx, first, last):
            if not cq.check(text):
                continue
            res.total += 1
            if len(res.examples) < 10:
                res.examples.append(n)
            if cq.by:
                k = group_key(cq.by, text, when)
                g = res.groups.get(k)
                if g is None:
                    res.groups[k] = [1, n]
                else:
                    g[0] += 1
    return res
