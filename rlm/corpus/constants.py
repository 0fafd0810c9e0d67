"""Digit-bearing words that are the same on every line of an event kind stay in its template.

The counting pass masks every token with a digit (`ssh2`, `HTTP/1.1`, `workers2.properties`
become `#`) so that values group at disk speed; the miner then sees a variable there. Here,
after mining, each variable of a kind is read back from the raw text of the kind's kept lines
(the first lines of each of its shapes, and its last line). A variable whose value is the
same on all of them, on at least two lines, and is a name (it has a letter and is not a hex
number: `ssh2`, `HTTP/1.1`, a path) is put back as a constant. A bare number that repeats
(`1`, `3479`, `0x0`) stays a variable: over a sample it is often a count or a size that takes
other values later in the file, and on a kind of one line every value "repeats".
On the 16 LogHub 2k samples every constant put back this way is the same on every line of
its kind (evals/RESULTS.md). The grouping of lines is not changed: only the template's words.
"""

from __future__ import annotations

import re

from rlm.corpus.header import message_start
from rlm.corpus.miner import VAR, split_slots

SAMPLE_MAX = 64  # lines read back per kind
MIN_LINES = 2  # a value seen on one line only is not "the same on every line"
_LETTER = re.compile(r"[A-Za-z]")
_DIGIT = re.compile(r"\d")
_HEX_NUMBER = re.compile(r"(?:0[xX])?[0-9a-fA-F]+")


def _sample(tc, kind) -> list[int]:
    """The kind's kept line numbers to read: at most SAMPLE_MAX, its last line among them."""
    kept: set[int] = set()
    for s in kind.shapes:
        entry = tc.counts.get(s)
        if entry is not None:
            kept.update(entry[1])
    if kind.last_line:
        kept.add(kind.last_line)
    lines = sorted(kept)
    if len(lines) > SAMPLE_MAX:  # spread: the first ones and the last one
        lines = lines[: SAMPLE_MAX - 1] + [lines[-1]]
    return lines


def _keeps(value: str) -> bool:
    """A digit-bearing name: a letter, not a hex number, no space."""
    if not value or not _DIGIT.search(value) or any(c.isspace() for c in value) or VAR in value:
        return False
    return bool(_LETTER.search(value)) and not _HEX_NUMBER.fullmatch(value)


def _fill(template: str, fixed: dict[int, str]) -> str:
    pieces = template.split(VAR)
    out = [pieces[0]]
    for i, piece in enumerate(pieces[1:]):
        out.append(fixed.get(i, VAR))
        out.append(piece)
    return "".join(out)


def restore_constants(src, tc, kinds) -> None:
    """Put back, in each kind's template, the digit-bearing values that are the same on every
    line read (see the module's doc); each kind's `constants` lists them."""
    for k in kinds:
        if not k.slots or k.count < MIN_LINES:
            continue
        lines = _sample(tc, k)
        rows = []
        for ln in lines:
            raw = src.line(ln, 2000)
            got = split_slots(k.template, raw[message_start(raw):].strip())
            if got is None or len(got) != k.slots:
                rows = []
                break  # a line that does not read as the template: leave the kind alone
            rows.append(got)
        if len(rows) < MIN_LINES:
            continue
        fixed = {}
        for i in range(k.slots):
            values = {r[i] for r in rows}
            if len(values) == 1 and _keeps(v := next(iter(values))):
                fixed[i] = v
        if fixed:
            k.mined = k.template
            k.template = _fill(k.template, fixed)
            k.slots -= len(fixed)
            k.constants = list(fixed.values())
