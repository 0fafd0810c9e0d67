"""Multi-line records: a stack trace or traceback belongs to the header line above it.

A candidate found on a continuation line (`\tat ...`, `Caused by: ...`, `  File "..."`) is
moved to its record's header line, and every record candidate spans its continuation lines,
so one exception is one candidate and one finding, cited as a line range.
"""

from __future__ import annotations

from rlm.corpus.logformat import header_end, is_continuation
from rlm.corpus.source import TextSource

MAX_RECORD_LINES = 80  # a runaway "record" is cut here (the cut keeps its header)


def continues(line: str) -> bool:
    return not header_end(line) and is_continuation(line)


def record_span(src: TextSource, ln: int, max_lines: int = MAX_RECORD_LINES) -> tuple[int, int]:
    """(first, last) line of the record that holds line `ln` (1-based, inclusive)."""
    start = ln
    while start > 1 and ln - start < max_lines and continues(src.line(start, 2000)):
        start -= 1
    if continues(src.line(start, 2000)):
        start = ln  # no header within reach: the line stands alone
    end, n = ln, src.line_count
    while end < n and end - start < max_lines and continues(src.line(end + 1, 2000)):
        end += 1
    return start, end


def to_records(src: TextSource, lines: list[int]) -> tuple[list[int], dict[int, int], dict[int, int]]:
    """Candidates as records: (header lines ascending, header -> last line, line -> header)."""
    end: dict[int, int] = {}
    start_of: dict[int, int] = {}
    for ln in lines:
        s, e = record_span(src, ln)
        start_of[ln] = s
        end[s] = max(end.get(s, s), e)
    return sorted(end), end, start_of
