"""Event templates from distinct masked line shapes: merge over the shapes, not the lines.

Input: the distinct masked shapes of a log (rlm/corpus/counter.py counts them at disk speed;
a digit-bearing token is already `#`) with their counts. Per shape, once: the header is parsed
apart (rlm/corpus/header.py), month and day names become variables, and the message is cut
into tokens and separators. Then, among shapes with the same separators, a token position
whose values vary while every other token is equal is a variable (usernames, hostnames, day
names: with or without digits). That runs to a fixed point, so two variable positions are
found one after the other. A position with only two plain words (`opened`/`closed`) stays
constant unless one side is already a variable: two words are two events more often than one
event with a two-valued slot. No per-format settings.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from rlm.corpus.header import CALENDAR, Header, split_header

VAR = "<*>"
_SEP = re.compile(r"(\s+|[|,;=()\[\]{}\"'<>])")
_PLAIN = re.compile(r"[A-Za-z]+")


@dataclass
class Event:
    """One mined template: its tokens (VAR where a value varies), separators, component."""
    tokens: tuple[str, ...]
    seps: tuple[str, ...]
    component: str | None
    count: int = 0
    shapes: list[bytes] = field(default_factory=list)
    levels: dict[str, int] = field(default_factory=dict)  # level word -> lines
    rank: int | None = None  # the worst header level's syslog rank

    def text(self) -> str:
        out = []
        for i, tok in enumerate(self.tokens):
            out.append(tok)
            if i < len(self.seps):
                out.append(self.seps[i])
        msg = "".join(out).strip()
        return f"{self.component} {msg}" if self.component else msg


@dataclass
class Parsed:
    header: Header
    tokens: tuple[str, ...]
    seps: tuple[str, ...]


def parse_shape(shape: str) -> Parsed:
    """Header, tokens and separators of one masked shape."""
    head = split_header(shape)
    parts = _SEP.split(shape[head.end:].strip())
    tokens = tuple(VAR if ("#" in t or t in CALENDAR) else t for t in parts[0::2])
    seps = tuple(" " if s.isspace() else re.sub(r"\s+", " ", s) for s in parts[1::2])
    comp = head.component
    if comp is not None:
        comp = re.sub(r"#", VAR, comp)
        head.component = comp
    return Parsed(head, tokens, seps)


MIN_CONSTANTS = 2


def _constants(tokens: tuple[str, ...]) -> int:
    return sum(1 for t in tokens if t and t != VAR)


def _variable(values: set[str]) -> bool:
    """Enough evidence that a position holds a value, not a word of the event."""
    if len(values) >= 3 or VAR in values:
        return True
    return not all(_PLAIN.fullmatch(v) for v in values)


def _merge_group(keys: set[tuple[str, ...]]) -> dict[tuple[str, ...], tuple[str, ...]]:
    """Token tuples (one separator pattern) -> their template, to a fixed point."""
    parent = {k: k for k in keys}
    current = set(keys)
    width = len(next(iter(keys)))
    changed = True
    while changed and len(current) > 1:
        changed = False
        for i in range(width):
            buckets: dict[tuple, set[str]] = defaultdict(set)
            for t in current:
                buckets[t[:i] + t[i + 1:]].add(t[i])
            for rest, values in buckets.items():
                if len(values) < 2 or not _variable(values):
                    continue
                merged = rest[:i] + (VAR,) + rest[i:]
                if _constants(merged) < MIN_CONSTANTS:
                    continue  # nothing of the event would be left: two events, not one
                for v in values:
                    old = rest[:i] + (v,) + rest[i:]
                    if old != merged:
                        parent[old] = merged
                        current.discard(old)
                parent.setdefault(merged, merged)
                current.add(merged)
                changed = True

    def root(k):
        while parent[k] != k:
            k = parent[k]
        return k

    return {k: root(k) for k in keys}


def mine(shapes: dict[bytes, int]) -> tuple[list[Event], dict[bytes, int]]:
    """Events (ordered as first met in `shapes`) and each shape's event index."""
    parsed: dict[bytes, Parsed] = {}
    groups: dict[tuple, set[tuple[str, ...]]] = defaultdict(set)
    for shape in shapes:
        p = parsed[shape] = parse_shape(shape.decode("utf-8", "replace"))
        groups[p.seps].add(p.tokens)
    roots: dict[tuple, tuple[str, ...]] = {}
    for seps, keys in groups.items():
        for k, r in _merge_group(keys).items():
            roots[(seps, k)] = r
    events: list[Event] = []
    index: dict[tuple, int] = {}
    of_shape: dict[bytes, int] = {}
    for shape, count in shapes.items():
        p = parsed[shape]
        r = roots[(p.seps, p.tokens)]
        key = (p.seps, r)
        at = index.get(key)
        if at is None:
            at = index[key] = len(events)
            events.append(Event(r, p.seps, p.header.component))
        ev = events[at]
        ev.count += count
        ev.shapes.append(shape)
        if p.header.level is not None:
            ev.levels[p.header.level] = ev.levels.get(p.header.level, 0) + count
            if ev.rank is None or p.header.rank < ev.rank:
                ev.rank = p.header.rank
        of_shape[shape] = at
    return events, of_shape
