"""Which tokens of a candidate line are real identifiers, worth following across the log.

A story joins distant lines that share an identifier (one session id on five lines). A token
that merely looks like an id (`ssh2`, `R02`, a protocol or a build name) is not one: it is the
same on every line of its event. A real identifier is a value of a *high-cardinality* slot of
its event kind: among the kind's kept example lines, that variable takes many different
values (request, session, block, transaction ids, ports, pids). Decided from the template
table (rlm/corpus/templates.py) and a few example lines per kind: no extra pass.
"""

from __future__ import annotations

import re

from rlm.corpus.header import message_start
from rlm.corpus.mask import MASK_RE
from rlm.corpus.templates import EventKind, TemplateTable, split_slots

_TIME = re.compile(r"^\d{1,4}[-/:.]\d{1,2}[-/:.T]\d{1,2}(?:[ :.,T]\d+)*$")  # 12:16:51, 2005-06-03
MIN_VALUES = 3  # a slot with fewer distinct values among the examples is not an id slot
MIN_SHARE = 0.5  # ... nor one whose values repeat on most example lines
COMMON_KINDS = 200  # the commonest kinds whose constant-like values are never ids


def _values(src, kind: EventKind, line: int) -> tuple[str, ...] | None:
    raw = src.line(line, 2000)
    return split_slots(kind.template, raw[message_start(raw):].strip())


def id_slots(src, kind: EventKind) -> tuple[set[int] | None, set[str]]:
    """The slots of `kind` whose values vary a lot among its example lines (None: too few
    examples to tell), and the values of its other slots (`ssh2`: the same on every line)."""
    rows = [v for ln in kind.examples if (v := _values(src, kind, ln)) is not None]
    if len(rows) < MIN_VALUES:
        return None, set()
    ids, constant = set(), set()
    for i in range(kind.slots):
        distinct = {r[i] for r in rows if i < len(r)}
        if len(distinct) >= max(MIN_VALUES, MIN_SHARE * len(rows)):
            ids.add(i)
        else:
            constant |= distinct
    return ids, constant


def story_ids(src, table: TemplateTable, lines: list[int]) -> dict[int, set[str]]:
    """line -> the values on it that are real identifiers (maybe none). A kind with enough
    example lines: the values of its high-cardinality slots. A kind seen once or twice: the
    values of its variables that look like ids and are not a low-cardinality value of one of
    the log's common kinds (`ssh2`, a protocol, a build name)."""
    slots: dict[int, set[int] | None] = {}
    common: set[str] = set()
    for kind in sorted(table.templates, key=lambda k: -k.count)[:COMMON_KINDS]:
        slots[kind.id], constant = id_slots(src, kind)
        common |= constant | set(kind.constants)  # `ssh2` put back in the template
    out: dict[int, set[str]] = {}
    for ln in lines:
        raw = src.line(ln, 2000)
        kind = table.kind_of(MASK_RE.sub(b"#", raw.encode("utf-8", "surrogateescape")))
        if kind is None:
            out[ln] = set()
            continue
        if kind.id not in slots:
            slots[kind.id] = id_slots(src, kind)[0]
        got = _values(src, kind, ln)
        which = slots[kind.id] if slots[kind.id] is not None else range(kind.slots)
        vals = {got[i].strip("[]()<>,;:'\"") for i in which if got and i < len(got)}
        out[ln] = {v for v in vals if is_identifier(v)
                   and (slots[kind.id] is not None or v not in common)}
    return out


def is_identifier(value: str) -> bool:
    """A value worth following: not a time, not a short number (a count, a port, a size), not
    a phrase. IPs, host:port, block/request/session ids and long hex or digit ids are."""
    if not value or " " in value or _TIME.match(value):
        return False
    if value.isdigit():
        return len(value) >= 8
    return any(c.isalnum() for c in value) and len(value) >= 4
