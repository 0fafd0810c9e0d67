"""Is this text a log? Decided from record regularity, not from one timestamp shape.

A line is a *record header* when its first ~100 characters hold a time (any usual form: ISO,
syslog, Apache, log4j, `17/06/09`, `[06.09 20:10:42]`, HDFS's `170609 201040`, epoch seconds
or milliseconds) or a level in a header position (`INFO`, `[error]`, `<3>`, logcat's ` E `),
or when it is a JSON object with a time or level key. A line is a *continuation* when it is
indented or is a stack-trace / traceback line. A text is a log when:

- most non-blank lines are headers, and headers plus continuations are nearly all of them;
- the headers are regular: once digits and words are reduced to classes, a few header shapes
  cover most of them (prose that mentions a time does not);
- it is not a table (a delimiter-separated header row and a constant field count), and not a
  transcript (a time followed by a speaker's name and a colon on most lines);
- the line lengths look like records (median >= 15 characters).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field

HEAD = 100  # characters of a line searched for a header
_TIME = re.compile(
    r"\d{1,2}:\d{2}(?::\d{2})?"                      # 20:10:41 (syslog, ISO, log4j, Apache, ...)
    r"|\b\d{4}[-/.]\d{1,2}[-/.]\d{1,2}\b"            # 2017-06-09, 2005.06.03
    r"|\b\d{2}/\d{2}/\d{2}\b"                        # 17/06/09 (Spark)
    r"|^\d{6} \d{6}\b"                               # 170609 201040 (HDFS)
    r"|\b1\d{9}(?:\.\d+)?\b|\b1\d{12}\b"             # epoch seconds (2001..2033) or millis
)
_LEVEL_WORD = (r"TRACE|DEBUG|FINE|FINER|FINEST|INFO|NOTICE|WARN|WARNING|ERROR|ERR|SEVERE|FATAL|"
               r"CRIT|CRITICAL|ALERT|EMERG|PANIC")
_LEVEL = re.compile(
    rf"(?:^|[\s\[|,(-])(?:{_LEVEL_WORD})(?=[\s\]|:,)-])"           # INFO, [error], | WARN |
    rf"|(?:^|[\s\[|,(-])(?i:{_LEVEL_WORD})(?=\])"                    # [error] [notice] (Apache)
    r"|^<\d{1,3}>"                                                   # <3> syslog priority
    r"|(?:^|\s)[VDIWEFA](?:/[\w.$-]+\s*(?:\(\s*\d+\))?:|\s+[\w.$/-]+:\s)"  # logcat E/Tag: or ' E Tag: '
    r"|,\s+(?:Info|Warning|Error)\s"                                 # Windows CBS
)
_CONTINUATION = re.compile(
    r"^(?:\s+\S|Caused by:|Traceback \(most recent call last\)|\.\.\. \d+ more"
    r"|[\w.$]+(?:Exception|Error|Throwable)\b(?::|$))"
)
_SPEAKER = re.compile(r"^\W{0,2}\d{1,2}:\d{2}(?::\d{2})?\W{0,2}\s+[A-Z][\w.'-]*(?: [A-Z][\w.'-]*)?:\s")
_TIME_KEYS = {"ts", "time", "timestamp", "@timestamp", "date", "datetime", "t", "level", "lvl",
              "severity", "msg", "message", "log"}
_SHAPE = [(re.compile(r"\d+"), "0"), (re.compile(r"[A-Za-z_]+"), "a"), (re.compile(r"\s+"), " ")]
_DELIMS = (",", "\t", ";", "|")


@dataclass
class LogFormat:
    is_log: bool
    kind: str  # log | transcript | table | other
    reasons: list[str] = field(default_factory=list)
    header_share: float = 0.0  # non-blank lines that start a record
    continuation_share: float = 0.0  # non-blank lines that continue one (stack traces)
    shape_cover: float = 0.0  # headers covered by the five most common header shapes
    median_len: int = 0


def header_end(line: str) -> int:
    """End of the record header in `line` (0 when the line has none): the end of the first
    time or level found in its first HEAD characters."""
    head = line[:HEAD]
    m = _TIME.search(head) or _LEVEL.search(head)
    if m:
        return m.end()
    if head.startswith("{") and _json_record(line):
        return 1
    return 0


def is_continuation(line: str) -> bool:
    return bool(_CONTINUATION.match(line))


def _json_record(line: str) -> bool:
    try:
        obj = json.loads(line)
    except ValueError:
        return False
    return isinstance(obj, dict) and bool(_TIME_KEYS & {k.lower() for k in obj})


def _shape(text: str) -> str:
    for rx, rep in _SHAPE:
        text = rx.sub(rep, text)
    return text


def _is_table(lines: list[str]) -> str | None:
    """A delimiter-separated header row and the same field count on most lines."""
    first = lines[0]
    for d in _DELIMS:
        n = first.count(d)
        if n < 2:
            continue
        names = [f.strip().strip('"') for f in first.split(d)]
        if not all(re.fullmatch(r"[A-Za-z_][\w .()/-]{0,40}", f) for f in names):
            continue
        same = sum(1 for s in lines if s.count(d) == n) / len(lines)
        if same >= 0.8:
            return f"a header row of {n + 1} {d!r}-separated names and {same:.0%} of lines with as many fields"
    return None


def detect(lines: list[str]) -> LogFormat:
    """Decide whether sample lines (contiguous head lines and/or spread samples) are a log."""
    lines = [s.rstrip("\r\n") for s in lines if s.strip()]
    if not lines:
        return LogFormat(False, "other", ["no non-blank lines"])
    n = len(lines)
    ends = [header_end(s) for s in lines]
    headers = [s[:e] for s, e in zip(lines, ends) if e]
    cont = sum(1 for s, e in zip(lines, ends) if not e and is_continuation(s))
    lens = sorted(len(s) for s in lines)
    fmt = LogFormat(False, "other", header_share=len(headers) / n, continuation_share=cont / n,
                    median_len=lens[n // 2])
    shapes = Counter(_shape(h) for h in headers)
    fmt.shape_cover = sum(c for _, c in shapes.most_common(5)) / max(1, len(headers))
    table = _is_table(lines)
    if table:
        fmt.kind, fmt.reasons = "table", [table]
        return fmt
    speakers = sum(1 for s in lines if _SPEAKER.match(s))
    if speakers / n >= 0.5:
        fmt.kind, fmt.reasons = "transcript", [f"{speakers / n:.0%} of lines are a time, a name and a colon"]
        return fmt
    why = (f"{fmt.header_share:.0%} of lines start a record (a time or level near the start), "
           f"{fmt.continuation_share:.0%} continue one; the 5 commonest header shapes cover "
           f"{fmt.shape_cover:.0%}; median line {fmt.median_len} chars")
    fmt.reasons = [why]
    fmt.is_log = (fmt.header_share >= 0.5 and fmt.header_share + fmt.continuation_share >= 0.8
                  and fmt.shape_cover >= 0.6 and fmt.median_len >= 15)
    fmt.kind = "log" if fmt.is_log else "other"
    return fmt
