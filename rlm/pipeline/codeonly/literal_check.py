"""After a count whose question names literals (`status 404`, rlm.corpus.literals): the text
as the log writes it, for the answer to state ("lines holding `status: 404`"), and the guard
on a zero: when no line holds the key and its value joined, yet lines hold the value (with the
key apart, `status code 404`, or without it, `disconnect code 11` where the log writes
`disconnect from …: 11`), the log may write them another way, and 0 would answer another
question; nor when no line holds the value at all (`how many lines in the 2k log?`: `2k` is
no text of the log), as no template holding the question's words is not a sure 0 either.
"""

from __future__ import annotations

import re

from rlm.corpus.count_scan import CountSpec, scan_counts

FORMS = 3  # forms of one literal the answer names


def written_or_apart(sources, literals, tally) -> list[tuple[str, int, int]]:
    """Sets each literal's `written` forms from the counted example lines; when nothing was
    counted, returns (label, lines holding the value, of them with the key too) for each keyed
    literal whose value the log does write, and (label, 0, 0) for each literal whose value no
    line holds: a zero code must not state as sure."""
    if not literals:
        return []
    texts = [src.line(ln, 2000) for src, ln in tally.examples]
    for lit in literals:
        if len(lit.values) != 1:  # alternatives: each value's form may not be among the examples
            continue
        rx = re.compile(lit.pattern())
        forms: list[str] = []
        for text in texts:
            if not (m := rx.search(text)):
                continue
            if m.group(0) not in forms:
                forms.append(m.group(0))
        lit.written = forms[:FORMS]
    if tally.total:
        return []
    out = []
    for lit in literals:
        needle = lit.needle()
        if _count(sources, (lit.pattern(),), needle):
            continue  # the log holds it: the zero is the other conditions' (a level, words)
        parts = lit.parts()
        with_value = _count(sources, (parts[1] if parts else lit.pattern(),), needle)
        if not with_value:  # on no line at all: maybe not text the log writes (`the 2k log`)
            out.append((" or ".join(f"`{v}`" for v in lit.values), 0, 0))
        elif parts:
            out.append((lit.label(), with_value, _count(sources, parts, needle)))
    return out


def _count(sources, patterns: tuple[str, ...], needle: str) -> int:
    spec = CountSpec(literals=patterns, needle=needle)
    return sum(scan_counts(src, spec).table.total for src in sources if src.size)
