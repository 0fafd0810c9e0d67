"""The count questions' pass over a log's lines as a shard scan (rlm.executor.scan): each shard
tallies the lines its predicate matches (totals, groups by slot, kinds, first examples, every
matching line as runs of line numbers), and the driver merges the shards' tallies in file
order. The same shards on either executor, so a local and a Ray run count the same lines.

What a line must be is a `CountSpec`, plain data (it crosses to worker processes and Ray
tasks): the masked shapes of the templates that carry the question's words, or the question's
anchors, or a level, or every line; and the slot to group by (rlm.corpus.slots).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rlm.corpus.counter import hit_lines, read_blocks
from rlm.corpus.literals import compares
from rlm.corpus.mask import mask_block
from rlm.corpus.predicate import line_holds
from rlm.corpus.severity import ERROR_RANK, severity
from rlm.corpus.slots import slot_value
from rlm.engine.interrupt import checkpoint
from rlm.executor.scan import ScanResult, scan_planned, scan_shards
from rlm.executor.shards import Shard, plan_ranges

EXAMPLES = 10
LINE_CHARS = 2000  # a template's line is read this far for its slot (as TextSource.line does)
BLOCK = 1 << 22
_ERR_WORDS = (rb"ERR|FATAL|CRIT|SEVERE|PANIC|EMERG|ALERT|FAILURE|\[error\]|\[crit|\[alert|\[emerg"
              rb"|<[0-3]>|, Error |\"(?:error|fatal|critical|crit|emerg|alert|panic)\"")
_WARN_WORDS = rb"WARN|\[warn|<4>|, Warning |\"warn(?:ing)?\""
_LOGCAT_LEVEL = {"error": rb"|^[EFA]/| [EFA] ", "warn": rb"|^W/| W "}


@dataclass(frozen=True)
class CountSpec:
    """What a line must be to count, and what it is grouped by."""

    anchors: tuple[str, ...] = ()  # lines mentioning any of these (case-insensitive)
    level: str | None = None  # "error" | "warn": lines of that level
    logcat: bool = False  # the file is logcat: its one-letter levels count too
    shapes: tuple[tuple[bytes, str], ...] | None = None  # (masked shape, its template)
    slot: str | None = None  # rlm.corpus.slots: the group-by value of each line
    # regexes (rlm.corpus.literals: `status: 404`) a line must match, every one, besides the
    # anchors, level or shapes above
    literals: tuple[str, ...] = ()
    needle: str | None = None  # a fast regex every literal-holding line matches (its values)
    # (regex capturing a key's number as `n`, op, threshold): `time over 0.3`, every one holds
    compare: tuple[tuple[str, str, float], ...] = ()
    # template -> what its lines must hold too (a question word in its variable part:
    # rlm.corpus.predicate.line_holds)
    needs: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def prefilter(self) -> re.Pattern | None:
        """A bytes regex every counted line matches (C speed); None: every line."""
        if self.anchors:
            return re.compile(b"|".join(re.escape(a.encode()) for a in self.anchors), re.I)
        if self.level:
            words = _ERR_WORDS if self.level == "error" else _WARN_WORDS
            return re.compile(words + (_LOGCAT_LEVEL[self.level] if self.logcat else b""), re.M)
        if self.literals or self.compare:
            first = self.literals[0] if self.literals else self.compare[0][0]
            return re.compile((self.needle or first).encode())
        return None

    def check(self, text: str) -> bool:
        """Every condition holds: an anchor, the level, each literal and comparison."""
        if self.anchors:
            low = text.lower()
            if not any(a.lower() in low for a in self.anchors):
                return False
        if self.level == "error" and not ((v := severity(text)) is not None and v <= ERROR_RANK):
            return False
        if self.level == "warn" and severity(text) != 4:
            return False
        return all(re.search(p, text) for p in self.literals) and all(
            any(compares(op, float(m.group("n")), n) for m in re.finditer(p, text))
            for p, op, n in self.compare)


@dataclass
class CountPart:
    """One shard's tally (line numbers 1-based from the shard's first line), or the merged
    tally of one file (numbers in the file)."""

    lines: int = 0
    total: int = 0
    groups: dict[str, list[int]] = field(default_factory=dict)  # key -> [count, first line]
    kinds: dict[str, list[int]] = field(default_factory=dict)  # template -> [count, first line]
    examples: list[int] = field(default_factory=list)
    runs: list[list[int]] = field(default_factory=list)  # [[first, last], ...] ascending

    def add(self, ln: int, kind: str | None, key: str | None) -> None:
        self.total += 1
        if len(self.examples) < EXAMPLES:
            self.examples.append(ln)
        runs = self.runs
        if runs and runs[-1][1] == ln - 1:
            runs[-1][1] = ln
        else:
            runs.append([ln, ln])
        for table, k in ((self.kinds, kind), (self.groups, key)):
            if k is not None:
                g = table.get(k)
                if g is None:
                    table[k] = [1, ln]
                else:
                    g[0] += 1

    def absorb(self, part: "CountPart", base: int) -> None:
        """Append the next shard's tally, its line 1 being line base + 1 here."""
        self.total += part.total
        self.examples += [base + n for n in part.examples[:EXAMPLES - len(self.examples)]]
        for table, other in ((self.groups, part.groups), (self.kinds, part.kinds)):
            for k, (c, first) in other.items():
                g = table.get(k)
                if g is None:
                    table[k] = [c, base + first]
                else:
                    g[0] += c
        for a, b in part.runs:
            if self.runs and self.runs[-1][1] == base + a - 1:
                self.runs[-1][1] = base + b
            else:
                self.runs.append([base + a, base + b])


def _rows(block: bytes) -> list[bytes]:
    rows = block.split(b"\n")
    if block.endswith(b"\n"):
        rows.pop()
    return rows


def count_shard(path: str, start: int, end: int, threads: int, spec: CountSpec) -> CountPart:
    """The tally of bytes [start, end) of the file (runs in this process, a worker process or
    a Ray task). Lines are split out only where they are needed: a prefilter hit, a shape hit,
    or a question about every line."""
    part = CountPart()
    shapes = dict(spec.shapes) if spec.shapes is not None else None
    rx = None if shapes is not None else spec.prefilter()
    for _, block in read_blocks(path, start, end, BLOCK):
        checkpoint()  # Ctrl-C, when it runs in this process
        n = block.count(b"\n") + (0 if block.endswith(b"\n") else 1)
        if shapes is not None:
            _by_shape(part, block, shapes, spec)
        elif rx is None:
            for i, raw in enumerate(_rows(block)):
                text = raw.decode("utf-8", "replace")
                part.add(part.lines + i + 1, None, _key(spec.slot, text, None))
        else:
            _by_prefilter(part, block, rx, spec)
        part.lines += n
    return part


def _key(slot: str | None, text: str, kind: str | None) -> str | None:
    return slot_value(slot, text, kind) if slot else None


def _by_shape(part: CountPart, block: bytes, shapes: dict[bytes, str], spec: CountSpec) -> None:
    """The lines of the block whose shape is a matched template's (and that hold the anchors
    and literals, when the question names them too)."""
    hits = [(i, k) for i, shape in enumerate(_rows(mask_block(block)))
            if (k := shapes.get(shape)) is not None]
    if not hits:
        return
    rows = _rows(block)
    extra = bool(spec.anchors or spec.literals or spec.compare)
    needs = dict(spec.needs)
    for i, kind in hits:
        if extra and not spec.check(rows[i].decode("utf-8", "replace")):
            continue
        if kind in needs and not line_holds(rows[i].decode("utf-8", "replace"), needs[kind]):
            continue
        text = rows[i].decode("utf-8", "replace")
        text = (text[:-1] if text.endswith("\r") else text)[:LINE_CHARS]
        part.add(part.lines + i + 1, kind, _key(spec.slot, text, kind))


def _by_prefilter(part: CountPart, block: bytes, rx: re.Pattern, spec: CountSpec) -> None:
    """The lines of the block that hold a prefilter hit, each checked exactly."""
    for i, raw in hit_lines(block, rx):
        text = raw.decode("utf-8", "replace")
        if spec.check(text):
            part.add(part.lines + 1 + i, None, _key(spec.slot, text, None))


@dataclass
class _Merged:
    """The file's tally while its shards merge in order (lines of the file merged so far)."""

    tally: CountPart
    done: int = 0


def _merge(m: _Merged, part: CountPart, shard: Shard) -> None:
    base = m.done if shard.line0 is None else shard.line0
    m.tally.absorb(part, base)
    m.done = base + part.lines


def _skip(m: _Merged, shard: Shard, lines: int) -> None:
    m.done = (m.done if shard.line0 is None else shard.line0) + lines


def scan_counts(src, spec: CountSpec, line_ranges: list[tuple[int, int]] | None = None
                ) -> ScanResult:
    """The tally of one file (a TextSource), whole or only `line_ranges` (a time window),
    shard by shard on the run's executor; `.table` is the merged CountPart (file line
    numbers), `.failed` the shards no worker could count."""
    merged = _Merged(CountPart())
    if line_ranges is None:
        res = scan_shards([str(src.path)], count_shard, (spec,), merged, _merge, _skip,
                          CountPart, light=True)
    else:
        offs, n = src.offsets, src.line_count
        spans = [(0, str(src.path), offs[a - 1], offs[b] if b < n else src.size)
                 for a, b in line_ranges if a <= b]
        planned = plan_ranges(spans, lambda _fi, off: src.line_of_offset(off) - 1)
        res = scan_planned([s for _, s in planned], count_shard, (spec,), merged, _merge,
                           _skip, CountPart, light=True)
    res.table = merged.tally
    res.table.lines = sum(max(0, b - a + 1) for a, b in line_ranges) if line_ranges is not None \
        else merged.done
    return res
