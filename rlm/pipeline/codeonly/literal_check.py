"""After a count whose question names literals (`status 404`, rlm.corpus.literals): the text
as the log writes it, for the answer to state ("lines holding `status: 404`"), and the doubts
that make a number not sure (exit 3, no number given):
- a zero when no line holds the key and its value joined, yet lines hold the value (with the
  key apart, `status code 404`, or without it, `disconnect code 11` where the log writes
  `disconnect from …: 11`): the log may write them another way;
- a zero when no line holds the value at all (`how many lines in the 2k log?`: `2k` is no text
  of the log), as words that no template holds are not a sure 0 either;
- a count of a named value that more lines write as a bare field (`pid 1702` on 22 lines of an
  Android log, `1702` alone on 1,073: the pid column, which the log does not name).
"""

from __future__ import annotations

import re

from rlm.corpus.count_scan import CountSpec, scan_counts
from rlm.words import n_

FORMS = 3  # forms of one literal the answer names
COLUMN_DIGITS = 3  # values with this many digits are distinctive enough to look for as fields


def doubts(sources, literals, tally) -> list[str]:
    """Sets each literal's `written` forms from the counted example lines; returns why the
    count is not sure (nothing when it is)."""
    if not literals:
        return []
    _written(sources, literals, tally)
    out = []
    for lit in literals:
        needle = lit.needle()
        joined = _count(sources, (lit.pattern(),), needle)
        if lit.op and not joined:  # `time over 0.3` where no line writes a number after `time`
            out.append(f"no line holds `{lit.key}` followed by a number, so code cannot tell "
                       "which of the log's numbers the question compares")
        elif lit.op:
            continue
        elif not tally.total and not joined:
            out += _absent(sources, lit, needle)
        elif joined and lit.key and all(sum(c.isdigit() for c in v) >= COLUMN_DIGITS
                                        for v in lit.values):
            out += _columns(sources, lit, needle, joined)
    return out


def _written(sources, literals, tally) -> None:
    texts = [src.line(ln, 2000) for src, ln in tally.examples]
    for lit in literals:
        if len(lit.values) != 1 or lit.op:  # alternatives, comparisons: no one written form
            continue
        rx = re.compile(lit.pattern())
        forms: list[str] = []
        for text in texts:
            if (m := rx.search(text)) and m.group(0) not in forms:
                forms.append(m.group(0))
        lit.written = forms[:FORMS]


def _absent(sources, lit, needle: str) -> list[str]:
    """The literal is on no line: its value is on none either, or not joined to its key."""
    parts = lit.parts()
    with_value = _count(sources, (parts[1] if parts else lit.pattern(),), needle)
    if not with_value:
        vals = " or ".join(f"`{v}`" for v in lit.values)
        return [f"no line holds {vals} at all, so code cannot tell whether the question's "
                "number is text the log writes"]
    if not parts:
        return []  # the value alone is on lines: the zero is the other conditions'
    both = _count(sources, parts, needle)
    return [f"no line holds {lit.label()} as a field, yet {_hold(with_value)} the "
            f"number ({both:,} of them with the word apart), so the log may write them another "
            "way"]


def _columns(sources, lit, needle: str, joined: int) -> list[str]:
    """More lines hold the value as a bare field than with its key: a column the log does
    not name may be what the question means."""
    vals = "|".join(re.escape(v) for v in lit.values)
    bare = rf"(?<!\S)(?:{vals})(?!\S)"
    other = _count(sources, (bare,), needle) - _count(sources, (bare, lit.pattern()), needle)
    if other <= joined:
        return []
    shown = " or ".join(f"`{v}`" for v in lit.values)
    return [f"{_hold(joined)} {lit.label()}, but {_hold(other, 'other line')} {shown} "
            "as a field of its own (a column the log does not name?), so code cannot tell "
            "which the question means"]


def _hold(n: int, noun: str = "line") -> str:
    return f"{n_(n, noun)} hold{'s' if n == 1 else ''}"


def _count(sources, patterns: tuple[str, ...], needle: str) -> int:
    spec = CountSpec(literals=patterns, needle=needle)
    return sum(scan_counts(src, spec).table.total for src in sources if src.size)
