"""Log profile: mask variable tokens, count templates, pick rare templates and error-level lines.

Code does the detection here: on a line-oriented log the interesting lines are those whose
shape is rare (a template seen a handful of times among hundreds of thousands) or whose level
says so. The file is read in ~256 KB blocks cut at newlines (plain reads, not mmap, so resident
memory stays flat however big the file); each block is masked by `mask_block` (numpy, in a
small thread pool that overlaps with the counting) and its lines are counted with a C-level
Counter. Newlines are never touched, so the masked block splits into exactly the original lines.
"""

from __future__ import annotations

import re
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Iterable, Iterator

from rlm.corpus.mask import mask_block
from rlm.corpus.records import to_records
from rlm.corpus.source import TextSource

_ERROR_LEVEL = re.compile(rb"\b(ERROR|ERR|FATAL|CRITICAL|CRIT|PANIC|EMERG|ALERT|SEVERE)\b|\bpanic:")
BLOCK = 1 << 18
IN_FLIGHT = 4  # masked blocks queued ahead of the counter: bounds memory


@dataclass
class Template:
    text: str
    count: int
    lines: list[int]  # up to `keep` line numbers (1-based, ascending)
    error_level: bool


@dataclass
class Profile:
    lines: int
    bytes: int
    templates_total: int
    templates: list[Template]  # rare and error-level templates, the candidates' shapes
    candidates: list[int] = field(default_factory=list)  # candidate line numbers, ascending
    common: list[Template] = field(default_factory=list)  # the most frequent shapes, for context
    overflow: bool = False  # too many distinct templates: tracking was capped (declared)
    rare_max: int = 0
    record_end: dict[int, int] = field(default_factory=dict)  # candidate -> last line of its record
    record_of: dict[int, int] = field(default_factory=dict)  # picked line -> its record's header


def read_blocks(path, block: int = BLOCK) -> Iterator[bytes]:
    """The file in blocks that end at a newline (the last one may not)."""
    with open(path, "rb") as fh:
        carry = b""
        while True:
            data = fh.read(block)
            if not data:
                if carry:
                    yield carry
                return
            data = carry + data if carry else data
            nl = data.rfind(b"\n")
            if nl == -1:
                carry = data
                continue
            carry = data[nl + 1:]
            yield data[: nl + 1]


def masked_blocks(blocks: Iterable[bytes], threads: int = 2) -> Iterator[bytes]:
    """mask_block over blocks, in order, with at most IN_FLIGHT blocks ahead."""
    if threads <= 1:
        yield from map(mask_block, blocks)
        return
    with ThreadPoolExecutor(threads) as ex:
        pending = []
        for b in blocks:
            pending.append(ex.submit(mask_block, b))
            if len(pending) >= IN_FLIGHT:
                yield pending.pop(0).result()
        for f in pending:
            yield f.result()


class TemplateCounter:
    """Counts masked lines; keeps the first `keep` line numbers of every template."""

    def __init__(self, keep: int = 20, max_templates: int = 200_000):
        self.keep, self.max_templates = keep, max_templates
        self.counts: dict[bytes, list] = {}  # template -> [count, [line numbers]]
        self.lines = 0
        self.overflow = False

    def feed(self, masked: bytes) -> None:
        """Count one block of masked lines (ending at a newline, except maybe the last)."""
        if masked.endswith(b"\n"):
            masked = masked[:-1]
        rows = masked.split(b"\n")
        base = self.lines  # line number of rows[0] is base + 1
        self.lines += len(rows)
        counts, keep = self.counts, self.keep
        need: dict[bytes, int] = {}  # templates that still want line numbers: how many
        for t, c in Counter(rows).items():
            e = counts.get(t)
            if e is None:
                if len(counts) >= self.max_templates:
                    self.overflow = True
                    continue
                counts[t] = e = [0, []]
            if len(e[1]) < keep:
                need[t] = min(c, keep - len(e[1]))
            e[0] += c
        if not need:
            return
        if len(need) <= 8:  # a few: C-level list.index scans
            for t, k in need.items():
                at, got = -1, counts[t][1]
                for _ in range(k):
                    at = rows.index(t, at + 1)
                    got.append(base + at + 1)
            return
        for i, t in enumerate(rows):  # many (a new log, or a high-variety one): one pass
            k = need.get(t)
            if k:
                counts[t][1].append(base + i + 1)
                need[t] = k - 1


def count_templates(path, keep: int = 20, max_templates: int = 200_000,
                    threads: int = 2) -> TemplateCounter:
    tc = TemplateCounter(keep, max_templates)
    for m in masked_blocks(read_blocks(path), threads):
        tc.feed(m)
    return tc


def default_rare_max(n: int) -> int:
    # "rare" is relative: 5 sightings are rare among 600,000 lines, common among 180
    return max(1, min(5, n // 20_000)) if n < 100_000 else max(5, n // 100_000)


def profile_log(src: TextSource, rare_max: int | None = None, keep: int = 20,
                max_templates: int = 200_000, max_candidates: int = 400) -> Profile:
    """One pass over the file. A template is rare when seen at most `rare_max` times
    (default: 1 on small logs rising to 5 at 100,000 lines, then 0.001% of the lines)."""
    tc = count_templates(src.path, keep, max_templates) if src.size else TemplateCounter()
    n = tc.lines
    if rare_max is None:
        rare_max = default_rare_max(n)
    picked: list[Template] = []
    candidates: list[int] = []
    for t, (c, lines) in tc.counts.items():
        err = bool(_ERROR_LEVEL.search(t))
        if c <= rare_max or err:
            picked.append(Template(t.decode("utf-8", "replace"), c, lines, err))
    # Rarest first; error-level shapes before others at equal rarity.
    picked.sort(key=lambda x: (x.count, not x.error_level, x.lines[0]))
    for tp in picked:
        for ln in tp.lines:
            if len(candidates) >= max_candidates:
                break
            candidates.append(ln)
    common = sorted(
        (Template(t.decode("utf-8", "replace"), c, v[:1], bool(_ERROR_LEVEL.search(t)))
         for t, (c, v) in tc.counts.items() if c > rare_max),
        key=lambda x: -x.count,
    )[:10]
    # a stack-trace line is its record's header's candidate: one exception, one candidate
    heads, record_end, record_of = to_records(src, sorted(set(candidates)))
    return Profile(lines=n, bytes=src.size, templates_total=len(tc.counts), templates=picked,
                   candidates=heads, common=common, overflow=tc.overflow,
                   rare_max=rare_max, record_end=record_end, record_of=record_of)
