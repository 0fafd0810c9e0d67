"""Log profile: count line shapes, then code's rules pick the candidate lines.

Code does the detection here. The counter (rlm/corpus/counter.py) masks variable tokens and
counts shapes at disk speed; the miner (rlm/corpus/templates.py) merges the shapes into event
kinds, so the rules count kinds (a username or a day name no longer makes a line rare). The
rules (rlm/corpus/signals.py) pick kinds by severity, failure words, rarity (overall and per
component), bursts, silences and returns after a quiet stretch.
Every candidate line carries the rules that picked it. A stack trace stays with its header.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rlm.corpus.counter import BlockReader
from rlm.corpus.logset import LogSet
from rlm.corpus.records import to_records
from rlm.corpus.severity import ERROR_RANK, severity
from rlm.corpus.signals import RULES, Pick, rate_rules, template_rules
from rlm.corpus.source import TextSource
from rlm.corpus.template_scan import scan_templates, scan_window
from rlm.executor.scan import FailedShard
from rlm.corpus.templates import EventKind, TemplateTable, by_kind, settle, table_from_counter


@dataclass
class Template:
    text: str
    count: int
    lines: list[int]  # up to `keep` line numbers (1-based, ascending), or the rule's lines
    error_level: bool
    rules: list[str] = field(default_factory=list)  # which rules picked it
    whys: list[str] = field(default_factory=list)  # one human reason per rule
    kind: EventKind | None = None  # its event kind in the template table (words, times, where)


@dataclass
class Profile:
    lines: int
    bytes: int
    templates_total: int
    templates: list[Template]  # the picked shapes, the candidates' shapes
    candidates: list[int] = field(default_factory=list)  # candidate line numbers, ascending
    common: list[Template] = field(default_factory=list)  # the most frequent shapes, for context
    overflow: bool = False  # too many distinct templates: tracking was capped (declared)
    rare_max: int = 0
    record_end: dict[int, int] = field(default_factory=dict)  # candidate -> last line of its record
    record_of: dict[int, int] = field(default_factory=dict)  # picked line -> its record's header
    rules_by_line: dict[int, list[str]] = field(default_factory=dict)  # candidate -> rules
    workers: list[dict] = field(default_factory=list)  # worker processes' cpu_s and rss_mb
    picks: list[Pick] = field(default_factory=list)  # every rule's pick (for evaluation)
    failed_shards: list[FailedShard] = field(default_factory=list)  # not profiled: named
    shards: int = 0  # shards the count was cut into (rlm.executor.shards)
    reused_shards: int = 0  # of them, tables kept by an earlier scan that did not finish
    scan_timing: dict = field(default_factory=dict)  # shard_s (each shard's), merge_s (driver)
    table: TemplateTable | None = None  # the event kinds (rlm/corpus/templates.py)


def default_rare_max(n: int) -> int:
    # "rare" is relative: 5 sightings are rare among 600,000 lines, common among 180; an event
    # kind seen twice in 1,000 lines or more is rare (its two lines may differ in a name)
    floor = 2 if n >= 1_000 else 1
    return max(floor, min(5, n // 20_000)) if n < 100_000 else max(5, n // 100_000)


def _is_error(text: str) -> bool:
    sev = severity(text)
    return sev is not None and sev <= ERROR_RANK


def why_picked(tp: Template, lines: int) -> str:
    """One template's reasons, in words: how often it was seen, its level, and each rule."""
    w = (f"a line shape seen {tp.count} time{'s' if tp.count != 1 else ''} in {lines:,} lines"
         + (", error level" if tp.error_level else ""))
    extra = [f"{r}: {y}" for r, y in zip(tp.rules, tp.whys) if r not in ("rare", "severity")]
    return w + (f" ({'; '.join(extra)})" if extra else "")


def _take(picked: list[Template], cap: int) -> tuple[list[int], dict[int, list[str]]]:
    """Up to `cap` candidate lines, round-robin over the picked shapes (every shape's first
    line before any shape's second), so one flood of a shape cannot crowd out the others."""
    candidates: list[int] = []
    rules_by_line: dict[int, list[str]] = {}
    depth = 0
    while len(candidates) < cap and any(depth < len(tp.lines) for tp in picked):
        for tp in picked:
            if depth >= len(tp.lines) or len(candidates) >= cap:
                continue
            ln = tp.lines[depth]
            if ln not in rules_by_line:
                candidates.append(ln)
                rules_by_line[ln] = []
            rules_by_line[ln] += [r for r in tp.rules if r not in rules_by_line[ln]]
        depth += 1
    return candidates, rules_by_line


def profile_log(src: TextSource | LogSet, rare_max: int | None = None, keep: int = 20,
                max_templates: int = 200_000, max_candidates: int = 400,
                line_ranges: list[tuple[int, int]] | None = None) -> Profile:
    """One pass over the file (or each file of a folder, in time order), then the rules. A
    template is rare when seen at most `rare_max` times (default: 1 on small logs rising to 5
    at 100,000 lines, then 0.001%). Line numbers are global over a LogSet (see `locate`)."""
    if line_ranges is not None:  # a time window (a folder's: global line numbers)
        scan = scan_window(src, line_ranges, keep, max_templates)
    else:  # shard by shard on the run's executor, one table across a folder's files
        files = src.sources if isinstance(src, LogSet) else [src]
        scan = scan_templates([s.path for s in files], keep, max_templates)
    shapes, failed, shards, reused = scan.table, scan.failed, scan.shards, scan.reused
    timing = {"shard_s": scan.shard_s, "merge_s": scan.merge_s}
    table = table_from_counter(src, shapes, exact_last=False)
    tc, canon = by_kind(shapes, table)  # the rules count event kinds, not byte shapes
    paths = [s.path for s in src.sources] if isinstance(src, LogSet) else [src.path]
    n = tc.lines if tc.counted is None else tc.counted
    if rare_max is None:
        rare_max = default_rare_max(n)

    def example(t: bytes, first_line: int) -> str:
        return src.line(first_line, 400)

    picks = template_rules(tc, rare_max, example)
    blocks = BlockReader(paths, tc, canon=canon)  # the few blocks the rate picks name, read again
    for p in rate_rules(tc, seen=blocks.time):
        got = blocks.lines(p.windows[0], p.template)
        if got:  # silence names the last sighting; burst and return the first
            p.lines = got[-1:] if p.rule == "silence" else got[:keep]
            picks.append(p)
    by_t: dict[bytes, Template] = {}
    for p in picks:
        text = p.template.decode("utf-8", "replace")
        tp = by_t.get(p.template)
        if tp is None:
            tp = by_t[p.template] = Template(text, tc.counts[p.template][0], [],
                                             _is_error(text), kind=table.kind_of(p.template))
        tp.rules.append(p.rule)
        tp.whys.append(p.why)
        tp.lines = sorted(set(tp.lines) | set(p.lines))
    picked = list(by_t.values())
    # more rules agreeing first, then the stronger rule (the order of RULES), rarer, earlier
    picked.sort(key=lambda x: (-len(set(x.rules)), min(RULES.index(r) for r in x.rules),
                               x.count, x.lines[0]))
    candidates, rules_by_line = _take(picked, max_candidates)
    common = sorted(
        (Template(t.decode("utf-8", "replace"), c, v[:1], _is_error(t.decode("utf-8", "replace")))
         for t, (c, v) in tc.counts.items() if c > rare_max),
        key=lambda x: -x.count,
    )[:10]
    # a stack-trace line is its record's header's candidate: one exception, one candidate
    heads, record_end, record_of = to_records(src, sorted(set(candidates)))
    for ln, head in record_of.items():
        if head != ln and ln in rules_by_line:
            rules_by_line.setdefault(head, [])
            rules_by_line[head] += [r for r in rules_by_line.pop(ln) if r not in rules_by_line[head]]
    settle(src, table, [tp.kind for tp in picked if tp.kind is not None])
    return Profile(lines=n, bytes=src.size, templates_total=len(table.templates), templates=picked,
                   candidates=heads, common=common, overflow=tc.overflow,
                   rare_max=rare_max, record_end=record_end, record_of=record_of,
                   rules_by_line=rules_by_line, workers=tc.workers, picks=picks, table=table,
                   failed_shards=failed, shards=shards, reused_shards=reused,
                   scan_timing=timing)
