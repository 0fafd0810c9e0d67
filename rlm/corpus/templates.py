"""A log's template table: its event kinds with exact counts, lines, times, level and where.

One pass counts the distinct masked shapes at disk speed (rlm/corpus/counter.py); the miner
(rlm/corpus/miner.py) merges the shapes into events; nothing here loops over lines except
`assign`, `lines_of` and `slot_values`, which read the file again when a caller needs every
line (the `--assign` output, a group-by). Line numbers are 1-based and global over a folder's
LogSet (rlm.corpus.logset.where maps them to a file and its own line).
"""

from __future__ import annotations

import copy
from array import array
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field

from rlm.corpus.counter import BlockReader, TemplateCounter, read_blocks
from rlm.corpus.constants import restore_constants
from rlm.corpus.template_scan import count_source
from rlm.corpus.header import message_start
from rlm.corpus.mask import mask_block
from rlm.corpus.miner import VAR, Event, mine, split_slots
from rlm.corpus.severity import lexicon_words, severity, severity_name
from rlm.corpus.timeparse import parser_for, text_reader_for

KEEP = 20  # example line numbers kept per event kind


@dataclass
class EventKind:
    id: int  # 1-based, in order of first appearance
    template: str  # the message, variables as <*> (the header's times, host, level apart)
    count: int  # exact
    first_line: int
    last_line: int
    first_time: float | None = None  # epoch seconds on the log's clock (None: no readable time)
    last_time: float | None = None
    first_seen: str | None = None  # the first line's timestamp as the file writes it
    last_seen: str | None = None
    rank: int | None = None  # syslog rank of the worst level its lines carry (0 worst .. 7)
    level: str | None = None  # the commonest level word, as written
    failure_words: list[str] = field(default_factory=list)  # failure words of the message
    components: list[tuple[str, int]] = field(default_factory=list)  # commonest first
    examples: list[int] = field(default_factory=list)  # the first KEEP line numbers
    shapes: list[bytes] = field(default_factory=list)  # its masked line shapes
    slots: int = 0  # variables in `template`
    constants: list[str] = field(default_factory=list)  # digit-bearing words put back (`ssh2`)
    mined: str = ""  # the template as mined, before they were put back ("": the same)

    @property
    def shape(self) -> str:
        """The template with every digit-bearing word a variable (`... port <*> <*>`): what
        rules on the form of a message read (rlm.corpus.anomalies.is_value_dump)."""
        return self.mined or self.template

    @property
    def severity(self) -> str:
        return severity_name(self.rank)

    def as_dict(self) -> dict:
        return {"id": self.id, "template": self.template, "count": self.count,
                "first_line": self.first_line, "last_line": self.last_line,
                "first_time": self.first_time, "last_time": self.last_time,
                "first_seen": self.first_seen, "last_seen": self.last_seen,
                "severity": self.severity, "level": self.level,
                "failure_words": self.failure_words,
                "components": [[c, n] for c, n in self.components], "examples": self.examples}


@dataclass
class TemplateTable:
    lines: int  # lines counted
    templates: list[EventKind]
    of_shape: dict[bytes, int]  # masked shape -> template id
    overflow: bool = False  # more distinct shapes than tracked: the rest have no template
    counter: TemplateCounter | None = None  # the pass it came from (blocks, rates, clock)

    def by_id(self, tid: int) -> EventKind:
        return self.templates[tid - 1]

    def kind_of(self, shape: bytes) -> EventKind | None:
        """The event kind of a masked line shape (None: a shape that was not tracked)."""
        tid = self.of_shape.get(shape)
        return self.templates[tid - 1] if tid else None

    def assign(self, src) -> Iterator[int]:
        """One template id per line of the file or folder, in order (0: a shape that was not
        tracked). Reads the file again, masked block by block: disk speed, flat memory."""
        of = self.of_shape
        for path in _paths(src):
            for _, block in read_blocks(path):
                rows = mask_block(block).split(b"\n")
                if block.endswith(b"\n"):
                    rows.pop()
                for r in rows:
                    yield of.get(r, 0)

    def lines_of(self, src, tid: int) -> list[int]:
        """Every line number of template `tid` (a pass over the file)."""
        return [n for n, t in enumerate(self.assign(src), 1) if t == tid]

    def slot_values(self, src, tid: int) -> list[tuple[int, tuple[str, ...]]]:
        """(line, the value of each <*> of the template) for every line of template `tid`:
        what a group-by counts. A line whose message does not fit the pattern (an absorbed
        longer form) gives its whole message as one value."""
        template = self.by_id(tid).template
        out = []
        for n in self.lines_of(src, tid):
            raw = src.line(n)
            msg = raw[message_start(raw):].strip()
            got = split_slots(template, msg)
            out.append((n, got if got is not None else (msg,)))
        return out


def _paths(src) -> list:
    files = getattr(src, "sources", None)
    return [s.path for s in files] if files is not None else [src.path]


def _kind(ev: Event, tid: int, counts: dict[bytes, list]) -> EventKind:
    lines = sorted(ln for s in ev.shapes for ln in counts[s][1])
    comps = sorted(ev.components.items(), key=lambda kv: -kv[1])
    level = max(ev.levels.items(), key=lambda kv: kv[1])[0] if ev.levels else None
    text = ev.text()
    rank = ev.rank
    if rank is None:  # a level the header scan does not read: `<3>`, JSON's "level": "error"
        ranks = [r for s in ev.shapes[:8] if (r := severity(s.decode("utf-8", "replace")))
                 is not None]
        rank = min(ranks) if ranks else None
    return EventKind(tid, text, ev.count, lines[0] if lines else 0, lines[-1] if lines else 0,
                     rank=rank, level=level, failure_words=lexicon_words(text),
                     components=comps, examples=lines[:KEEP], shapes=ev.shapes,
                     slots=text.count(VAR))


def build_table(src, line_ranges: list[tuple[int, int]] | None = None,
                max_templates: int = 200_000, exact_last: bool = True) -> TemplateTable:
    """The template table of a file or a folder's LogSet (or of a time window's line ranges).
    `exact_last`: find each kind's last line and its times (reads the blocks of last
    sightings again); without it, `last_line` is the last kept example and there are no
    times until `settle` is called for the kinds a caller shows."""
    tc = count_source(src, KEEP, max_templates, line_ranges)
    return table_from_counter(src, tc, exact_last)


def table_from_counter(src, tc: TemplateCounter, exact_last: bool = True) -> TemplateTable:
    events, of_shape = mine({t: e[0] for t, e in tc.counts.items()})
    kinds = [_kind(ev, i, tc.counts) for i, ev in enumerate(events)]
    kinds.sort(key=lambda k: k.first_line)  # ids in order of first appearance
    renum = {}
    for new, k in enumerate(kinds, 1):
        renum[k.id] = new
        k.id = new
    table = TemplateTable(tc.lines if tc.counted is None else tc.counted, kinds,
                          {s: renum[i] for s, i in of_shape.items()}, tc.overflow, tc)
    if exact_last:
        settle(src, table, table.templates)
    restore_constants(src, tc, table.templates)
    return table


def settle(src, table: TemplateTable, kinds: list[EventKind]) -> None:
    """Exact last line, and first and last time, of these kinds (blocks read again)."""
    if table.counter is not None:
        _last_sightings(src, table.counter, kinds)
    _times(src, table.lines, kinds)


def _last_sightings(src, tc: TemplateCounter, kinds: list[EventKind]) -> None:
    """Each kind's last line: the last block its shapes were counted in, read once again."""
    if not tc.series or tc.series_overflow:
        return  # no per-block record: the last kept example stands
    by_block: dict[int, list[EventKind]] = defaultdict(list)
    for k in kinds:
        bid = max((tc.series[s][0][-1] for s in k.shapes if s in tc.series), default=None)
        if bid is not None:
            by_block[bid].append(k)
    reader = BlockReader(_paths(src), tc, max_blocks=0)
    for bid, in_block in by_block.items():
        rows = reader.masked_rows(bid)
        last = {r: i for i, r in enumerate(rows)}  # each shape's last row in the block
        base = tc.block_line[bid]
        for k in in_block:
            at = max((last[s] for s in k.shapes if s in last), default=None)
            if at is not None:
                k.last_line = max(k.last_line, base + at + 1)


def by_kind(tc: TemplateCounter, table: TemplateTable) -> tuple[TemplateCounter, dict[bytes, bytes]]:
    """The count seen per event kind instead of per shape: each kind's shapes are counted under
    the kind's commonest shape (a real masked line with its header, so the level and component
    rules read it as before), with the lines and per-block rates of all its shapes. Returns that
    counter (sharing the blocks and clock with `tc`) and shape -> its kind's shape."""
    rep: dict[bytes, bytes] = {}
    for k in table.templates:
        top = max(k.shapes, key=lambda s: tc.counts[s][0])
        rep.update((s, top) for s in k.shapes)
    kc = copy.copy(tc)
    kc.counts, kc.series = {}, {}
    for s, (c, lines) in tc.counts.items():
        e = kc.counts.setdefault(rep.get(s, s), [0, []])
        e[0] += c
        e[1].extend(lines)
    for e in kc.counts.values():
        e[1] = sorted(e[1])[: tc.keep]
    merged: dict[bytes, dict[int, int]] = {}
    for s, (ids, counts) in tc.series.items():
        per = merged.setdefault(rep.get(s, s), {})
        for b, c in zip(ids, counts):
            per[b] = per.get(b, 0) + c
    for s, per in merged.items():
        bids = sorted(per)
        kc.series[s] = (array("I", bids), array("I", (per[b] for b in bids)))
    return kc, rep


def _times(src, lines: int, kinds: list[EventKind]) -> None:
    """First and last time of each kind, read from its first and last line in the log's own
    time format."""
    sample = [src.line(n, 400) for n in range(1, min(50, lines) + 1)]
    parse, text = parser_for(sample), text_reader_for(sample)
    for k in kinds:
        if k.first_line:
            first, last = src.line(k.first_line, 400), src.line(k.last_line, 400)
            k.first_time, k.last_time = parse(first), parse(last)
            if k.first_time is not None:
                k.first_seen, k.last_seen = text(first), text(last)


# -- the interface a log question is matched through (rlm.pipeline.strategies.counting) -----------------
@dataclass
class Row:
    id: str  # "t<kind id>"
    text: str  # the template in words, variables as <*> (the message, the header apart)
    count: int
    first_line: int
    key: int  # the kind id (how lines_of recognises its lines)


class KindTable:
    """The event kinds of one file, or of its lines in `ranges` (a time window), as rows to
    match a question against (commonest first), and every line of chosen rows."""

    def __init__(self, src, ranges: list[tuple[int, int]] | None = None):
        self.src, self.ranges = src, ranges
        self.table = build_table(src, line_ranges=ranges, exact_last=False)
        self.rows = sorted((Row(f"t{k.id}", k.template, k.count, k.first_line, k.id)
                            for k in self.table.templates), key=lambda r: (-r.count, r.first_line))
        self.overflow = self.table.overflow

    def lines_of(self, rows: list[Row]) -> Iterator[tuple[int, str, Row]]:
        """(line number, text, row) of every line of these rows' kinds, in file order."""
        by_id = {r.key: r for r in rows}
        src, of = self.src, self.table.of_shape
        for first, last in self.ranges or [(1, src.line_count)]:
            if last < first:
                continue
            a = src.offsets[first - 1]
            b = src.offsets[last] if last < src.line_count else src.size
            ln = first
            for _, block in read_blocks(src.path, a, b):
                raw = block.split(b"\n")
                masked = mask_block(block).split(b"\n")
                if block.endswith(b"\n"):
                    raw.pop()
                    masked.pop()
                for i, m in enumerate(masked):
                    row = by_id.get(of.get(m, 0))
                    if row is not None:
                        yield ln + i, raw[i].decode("utf-8", "replace").rstrip("\r"), row
                ln += len(masked)


def table_for(src, ranges: list[tuple[int, int]] | None = None) -> KindTable:
    return KindTable(src, ranges)
