"""Finding a short quote in consecutive lines after whitespace normalisation (a quote may cross
line breaks). The search behind rlm.verify.evidence's checks."""

from __future__ import annotations

from bisect import bisect_right
from typing import Sequence




def normalize_ws(s: str) -> str:
    """Collapse every run of whitespace (spaces, tabs, newlines, ...) to one space and strip."""
    return " ".join(s.split())


def _normalized_text(lines: Sequence[str]) -> tuple[str, list[int], list[int]]:
    """Join ``lines`` whitespace-normalised (a line break counts as whitespace).

    Returns (text, starts, idx): the segment of the i-th non-blank line begins at
    ``starts[i]`` in ``text`` and that line is ``lines[idx[i]]``. Blank lines contribute
    nothing. One int per line, not per character, so a big file stays cheap.
    """
    parts: list[str] = []
    starts: list[int] = []
    idx: list[int] = []
    pos = 0
    for i, line in enumerate(lines):
        seg = " ".join(line.split())
        if not seg:
            continue
        if parts:
            parts.append(" ")
            pos += 1
        starts.append(pos)
        idx.append(i)
        parts.append(seg)
        pos += len(seg)
    return "".join(parts), starts, idx


def find_quote_spans(lines: Sequence[str], first_line: int, quote: str) -> list[tuple[int, int]]:
    """Every (start, end) 1-based inclusive line range where ``quote`` occurs in ``lines``
    (consecutive lines whose first one is line number ``first_line``), after whitespace
    normalisation of both sides. A quote may cross line breaks. Overlapping occurrences are
    all reported; the result is in order of occurrence, without duplicates. Empty quote → [].
    """
    q = normalize_ws(quote)
    if not q or not lines:
        return []
    text, starts, idx = _normalized_text(lines)
    spans: list[tuple[int, int]] = []
    seen: set[tuple[int, int]] = set()
    pos = text.find(q)
    while pos != -1:
        # A normalised quote neither starts nor ends with a space, so its first and last
        # characters lie inside line segments: find those lines by bisection.
        a = idx[bisect_right(starts, pos) - 1]
        b = idx[bisect_right(starts, pos + len(q) - 1) - 1]
        span = (first_line + a, first_line + b)
        if span not in seen:
            seen.add(span)
            spans.append(span)
        pos = text.find(q, pos + 1)
    return spans


def find_quote(lines: Sequence[str], first_line: int, quote: str) -> tuple[int, int] | None:
    """The (start, end) line range of the shortest span of ``lines`` containing ``quote`` after
    whitespace normalisation; among equally short spans the earliest. ``lines`` are consecutive
    lines (without newlines) starting at 1-based line number ``first_line``; a quote may cross a
    line break (lines are joined with a space). Empty quote or no occurrence → None.
    """
    spans = find_quote_spans(lines, first_line, quote)
    if not spans:
        return None
    return min(spans, key=lambda s: (s[1] - s[0], s[0]))
