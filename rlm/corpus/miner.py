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
_PLAIN = re.compile(r"[A-Za-z]+[.!?:]?")
PLAIN_VALUES = 4  # distinct plain words that make a slot


@dataclass
class Event:
    """One mined template: its tokens (VAR where a value varies), separators, counts."""
    tokens: tuple[str, ...]
    seps: tuple[str, ...]
    count: int = 0
    shapes: list[bytes] = field(default_factory=list)
    levels: dict[str, int] = field(default_factory=dict)  # level word -> lines
    components: dict[str, int] = field(default_factory=dict)  # component -> lines
    rank: int | None = None  # the worst header level's syslog rank

    def text(self) -> str:
        out = []
        for i, tok in enumerate(self.tokens):
            out.append(tok)
            if i < len(self.seps):
                out.append(self.seps[i])
        return "".join(out).strip()


@dataclass
class Parsed:
    header: Header
    tokens: tuple[str, ...]
    seps: tuple[str, ...]


def parse_shape(shape: str) -> Parsed:
    """Header, tokens and separators of one masked shape."""
    head = split_header(shape)
    parts = _SEP.split(shape[head.end:].strip())
    tokens = [VAR if ("#" in t or t in CALENDAR) else t for t in parts[0::2]]
    seps = [" " if s.isspace() else re.sub(r"\s+", " ", s) for s in parts[1::2]]
    tokens, seps = _collapse_lists(tokens, seps)
    comp = head.component
    if comp is not None:
        comp = re.sub(r"#", VAR, comp)
        head.component = comp
    return Parsed(head, tuple(tokens), tuple(seps))


LIST_RUN = 3  # this many values in a row, with only spaces between, are one list of values


def _collapse_lists(tokens: list[str], seps: list[str]) -> tuple[list[str], list[str]]:
    """A run of LIST_RUN or more variables separated by single spaces (`delete <*> <*> <*> ...`,
    a list of ids of any length) becomes one variable: the event does not change with the
    length of its list."""
    out_t, out_s, i, n = [], [], 0, len(tokens)
    while i < n:
        j = i
        while tokens[i] == VAR and j + 1 < n and tokens[j + 1] == VAR and seps[j] == " ":
            j += 1
        if j - i + 1 >= LIST_RUN:
            out_t.append(VAR)
            if j < len(seps):
                out_s.append(seps[j])
            i = j + 1
            continue
        out_t.append(tokens[i])
        if i < len(seps):
            out_s.append(seps[i])
        i += 1
    return out_t, out_s


MIN_CONSTANTS = 2


def _constants(tokens: tuple[str, ...]) -> int:
    return sum(1 for t in tokens if t and t != VAR)


def _variable(values: set[str]) -> bool:
    """Enough evidence that a position holds a value, not a word of the event."""
    words = values - {VAR}
    if len(words) <= 1:
        return VAR in values and not (words and _PLAIN.fullmatch(next(iter(words))))
    if not all(_PLAIN.fullmatch(v) for v in words):
        return True
    return len(values) >= PLAIN_VALUES


ABSORB_TRIES = 64  # shorter templates tried per first word when absorbing a longer one
WIDE = 16  # distinct values at one position, among shapes that begin alike: a variable


def _widen(keys: set[tuple[str, ...]]) -> dict[tuple[str, ...], tuple[str, ...]]:
    """Values that vary together (`user alice opened f1 with x and y`: every shape differs
    in four places, so no two are equal but one) are found by columns: among the shapes of
    one separator pattern that begin with the same word, a position that takes WIDE or more
    values, beside a position that stays the same on nearly all of them, is a variable."""
    out = {k: k for k in keys}
    buckets: dict[str, list[tuple[str, ...]]] = defaultdict(list)
    for k in keys:
        buckets[k[0]].append(k)
    for members in buckets.values():
        if len(members) < WIDE:
            continue
        width = len(members[0])
        values = [defaultdict(int) for _ in range(width)]
        for k in members:
            for i, tok in enumerate(k):
                values[i][tok] += 1
        steady = [i for i in range(1, width)
                  if max(values[i].values()) >= 0.9 * len(members) and VAR not in values[i]]
        wide = [i for i in range(1, width) if len(values[i]) >= WIDE]
        if not steady or not wide:
            continue
        for k in members:
            new = tuple(VAR if i in wide else tok for i, tok in enumerate(k))
            if _constants(new) >= MIN_CONSTANTS:
                out[k] = new
    return out


def _merge_group(keys: set[tuple[str, ...]],
                 floor: int = MIN_CONSTANTS) -> dict[tuple[str, ...], tuple[str, ...]]:
    """Token tuples (one separator pattern) -> their template, to a fixed
    point. `floor`: constant tokens a merged template keeps at least."""
    parent = {k: k for k in keys}
    current = set(keys)
    width = len(next(iter(keys)))
    changed = True
    while changed and len(current) > 1:
        changed = False
        # the position with the most distinct values first: a package name or an id is the
        # variable, so a word beside it (`status installed <pkg> <ver>`) stays a constant
        order = sorted(range(width), key=lambda j: -len({t[j] for t in current}))
        for i in order:
            buckets: dict[tuple, set[str]] = defaultdict(set)
            for t in current:
                buckets[t[:i] + t[i + 1:]].add(t[i])
            for rest, values in buckets.items():
                if len(values) < 2 or not _variable(values):
                    continue
                merged = rest[:i] + (VAR,) + rest[i:]
                if _constants(merged) < floor:
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


def _pieces(tokens: tuple[str, ...], seps: tuple[str, ...]) -> list[str]:
    """A template as the literal text between its variables (len = variables + 1)."""
    pieces, cur = [], []
    for i, tok in enumerate(tokens):
        if tok == VAR:
            pieces.append("".join(cur))
            cur = []
        else:
            cur.append(tok)
        if i < len(seps):
            cur.append(seps[i])
    pieces.append("".join(cur))
    return pieces


def _fits(pieces: list[str], text: str) -> bool:
    """Does `text` read as the template, each variable taking a run of non-space characters
    (`<*>,<*>`, `LOCAL(<*>)`), never a space: one value, not a phrase. Leftmost matching: a
    rare miss only keeps two events apart."""
    if not text.startswith(pieces[0]) or not text.endswith(pieces[-1]):
        return False
    at, end = len(pieces[0]), len(text) - len(pieces[-1])
    if end < at:
        return False
    for piece in pieces[1:-1]:
        k = text.find(piece, at, end) if piece else at
        if k < 0 or any(c.isspace() for c in text[at:k]):
            return False
        at = k + len(piece)
    return not any(c.isspace() for c in text[at:end])


def _render(tokens: tuple[str, ...], seps: tuple[str, ...]) -> str:
    return "".join(t + (seps[i] if i < len(seps) else "") for i, t in enumerate(tokens))


def _absorb(events: list[Event]) -> dict[int, int]:
    """Event index -> the index of a shorter event whose variables take its extra tokens
    (`synchronized to LOCAL(<*>), stratum <*>` into `synchronized to <*>, stratum <*>`)."""
    by_first: dict[str, list[int]] = defaultdict(list)
    for i, ev in enumerate(events):
        if VAR in ev.tokens and _constants(ev.tokens) >= MIN_CONSTANTS:
            first = next(t for t in ev.tokens if t and t != VAR)
            by_first[first].append(i)
    for lst in by_first.values():  # the commonest first; a bounded number tried per token
        lst.sort(key=lambda i: -events[i].count)
        del lst[ABSORB_TRIES:]
    into: dict[int, int] = {}
    pieces: dict[int, list[str]] = {}
    for b in sorted(range(len(events)), key=lambda k: -len(events[k].tokens)):
        ev = events[b]
        text = _render(ev.tokens, ev.seps)
        best = None
        for tok in set(ev.tokens):
            for a in by_first.get(tok, ()):
                if a == b or len(events[a].tokens) >= len(ev.tokens):
                    continue
                pat = pieces.get(a) or pieces.setdefault(a, _pieces(events[a].tokens, events[a].seps))
                if _fits(pat, text) and (best is None or len(events[a].tokens) > len(events[best].tokens)):
                    best = a
        if best is not None:
            into[b] = best
    return into


def mine(shapes: dict[bytes, int]) -> tuple[list[Event], dict[bytes, int]]:
    """Events (ordered as first met in `shapes`) and each shape's event index."""
    parsed: dict[bytes, Parsed] = {}
    groups: dict[tuple, set[tuple[str, ...]]] = defaultdict(set)
    for shape in shapes:
        p = parsed[shape] = parse_shape(shape.decode("utf-8", "replace"))
        groups[p.seps].add(p.tokens)
    roots: dict[tuple, tuple[str, ...]] = {}
    for seps, keys in groups.items():
        wide = _widen(keys)
        merged = _merge_group(set(wide.values()))
        for k in keys:
            roots[(seps, k)] = merged[wide[k]]
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
            events.append(Event(r, p.seps))
        ev = events[at]
        ev.count += count
        ev.shapes.append(shape)
        if p.header.component is not None:
            ev.components[p.header.component] = ev.components.get(p.header.component, 0) + count
        if p.header.level is not None:
            ev.levels[p.header.level] = ev.levels.get(p.header.level, 0) + count
            if ev.rank is None or p.header.rank < ev.rank:
                ev.rank = p.header.rank
        of_shape[shape] = at
    into = _absorb(events)
    if not into:
        return events, of_shape
    keep = [i for i in range(len(events)) if i not in into]

    def final(i):
        while i in into:
            i = into[i]
        return i

    for b in into:
        a = events[final(b)]
        a.count += events[b].count
        a.shapes += events[b].shapes
        for mine_, theirs in ((a.levels, events[b].levels), (a.components, events[b].components)):
            for k, c in theirs.items():
                mine_[k] = mine_.get(k, 0) + c
        if events[b].rank is not None and (a.rank is None or events[b].rank < a.rank):
            a.rank = events[b].rank
    renum = {old: new for new, old in enumerate(keep)}
    return [events[i] for i in keep], {s: renum[final(i)] for s, i in of_shape.items()}


def split_slots(template: str, message: str) -> tuple[str, ...] | None:
    """The value of each <*> of `template` in a raw `message` (whitespace runs read as one
    space), or None when the message does not read as the template. Literal pieces are found
    left to right with str.find: linear time, no regex backtracking on hostile lines."""
    pieces = " ".join(template.split()).split(VAR)
    text = " ".join(message.split())
    if len(pieces) == 1:  # no variable: the message is the template, or another event
        return () if text == pieces[0] else None
    if not text.startswith(pieces[0]) or not text.endswith(pieces[-1]):
        return None
    at, end = len(pieces[0]), len(text) - len(pieces[-1])
    if end < at:
        return None
    values = []
    for piece in pieces[1:-1]:
        k = text.find(piece, at, end) if piece else at
        if k < 0:
            return None
        values.append(text[at:k])
        at = k + len(piece)
    values.append(text[at:end])
    return tuple(values) if len(pieces) > 1 else ()
