"""Candidate rules over a template count: each pick says which rule made it.

- severity: the header's level is error or worse, wherever the format puts it;
- lexicon: the message has failure words and the shape is not the log's background (at most
  0.1% of the lines, or rare);
- rare: a shape seen at most `rare_max` times;
- rare-in-component: a shape rare within its component (<= 0.1% of a component's >= 1,000 lines);
- burst: a shape whose rate jumps >= 10x its average in a time window;
- silence: a shape seen steadily that stops for good;
- after-quiet: a shape that returns after a quiet time much longer than its usual spacing.

Windows are the blocks the counter read (about 256 per file, at least 64 KB). When the lines
carry timestamps, the time rules run on the log's clock (rlm/corpus/clockrules.py: lines per
second, gaps in seconds, and the finding names the minutes); only a log without readable times
falls back to rates per stretch of lines (below), and its findings say so. The rate rules need
8 windows or more; on small logs only the template rules apply.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from rlm.corpus import clockrules
from rlm.corpus.clock import clock_of
from rlm.corpus.severity import ERROR_RANK, lexicon_words, severity, severity_name

# in order of strength when two shapes compete for the candidate cap (measured precision on
# the labelled BGL-style log, evals/bench_candidates.py)
RULES = ("lexicon", "rare-in-component", "burst", "silence", "after-quiet", "rare", "severity")
MIN_WINDOWS = 8
MAX_RATE_PICKS = 30
_LEVELS = r"(?:EMERG|PANIC|FATAL|ALERT|CRIT|CRITICAL|SEVERE|FAILURE|ERROR|ERR|WARN|WARNING|NOTICE|INFO|DEBUG|TRACE)"
_COMP_BEFORE_LEVEL = re.compile(rf"(?<![\w#])([A-Za-z][\w.$-]{{1,40}})\s+{_LEVELS}\b")
_COMP_COLON = re.compile(r"(?<![\w#])([A-Za-z_][\w.$/-]{1,60})(?:\[#\]|\(#\)|\([\w_]+\)\[#\])?:\s")
_COMP_BRACKET = re.compile(r"\[([A-Za-z][\w.$:/ -]{0,40})\]")


@dataclass
class Pick:
    template: bytes
    rule: str
    why: str
    lines: list[int] = field(default_factory=list)  # the lines this rule names (ascending)
    windows: list[int] = field(default_factory=list)  # rate rules: the windows (block ids)


def component(template: str) -> str | None:
    """The component a shape belongs to: a word before its level (BGL `KERNEL FATAL`), a
    `proc[pid]:` / `class:` prefix, or a bracketed name (`[checkout]`)."""
    head = template[:200]
    for rx in (_COMP_BEFORE_LEVEL, _COMP_COLON, _COMP_BRACKET):
        m = rx.search(head)
        if m and not re.fullmatch(_LEVELS, m.group(1).upper()):
            return m.group(1)
    return None


def template_rules(tc, rare_max: int, example) -> list[Pick]:
    """severity, lexicon, rare, rare-in-component. `example(template, first_line)` gives a
    real line when the template lost the level (a masked syslog priority `<#>`)."""
    n = tc.lines if tc.counted is None else tc.counted
    picks: list[Pick] = []
    comp_of: dict[bytes, str | None] = {}
    comp_total: dict[str, int] = {}
    for t, (c, _) in tc.counts.items():
        comp = component(t.decode("utf-8", "replace"))
        comp_of[t] = comp
        if comp:
            comp_total[comp] = comp_total.get(comp, 0) + c
    background = max(rare_max, n // 1000)
    for t, (c, lines) in tc.counts.items():
        text = t.decode("utf-8", "replace")
        sev = severity(example(t, lines[0]) if text.startswith("<#>") else text)
        if sev is not None and sev <= ERROR_RANK:
            picks.append(Pick(t, "severity", f"level {severity_name(sev)}", lines))
        if c <= rare_max:
            picks.append(Pick(t, "rare", f"a line shape seen {c} time{'s' if c != 1 else ''} "
                                         f"in {n:,} lines", lines))
        words = lexicon_words(text)
        if words and c <= background:
            picks.append(Pick(t, "lexicon", "failure words: " + ", ".join(words[:4]), lines))
        comp = comp_of[t]
        total = comp_total.get(comp, 0) if comp else 0
        if total >= 1000 and rare_max < c <= min(50, total // 1000):
            picks.append(Pick(t, "rare-in-component", f"{c} of {total:,} lines of component "
                                                      f"{comp}", lines))
    return picks


def rate_rules(tc, use_clock: bool = True, seen=None) -> list[Pick]:
    """burst, silence, after-quiet, from each shape's counts per window: on the log's clock
    when its lines carry times, else per stretch of lines (said in each pick's why).
    `seen(template, block, last)`: the exact time of a shape's first/last line in a block
    (rlm.corpus.counter.BlockReader.time), so a pick names its minutes, not its blocks'."""
    nb = len(tc.block_line)
    if nb < MIN_WINDOWS or tc.lines == 0:
        return []  # too few windows
    segments = list(zip(tc.block_file, tc.block_seg))  # files, and a time window's ranges
    clock, no_clock = clock_of(tc.block_t0, tc.block_t1, segments) if use_clock else (None, "")
    if tc.counted is not None:  # a time window: on its own clock only (stretches are uneven)
        if clock is None:
            return []
        clock.scope = "the time window"
    sizes = [b - a for a, b in zip(tc.block_line, list(tc.block_line[1:]) + [tc.lines])]
    bursts: list[Pick] = []
    others: list[Pick] = []
    for t, (ids, counts) in tc.series.items():
        total = tc.counts[t][0] if t in tc.counts else sum(counts)
        if clock is not None:
            kw = {"seen": lambda tp, b, last: clock.align(seen(tp, b, last), b)} if seen else {}
            if total >= 20:
                bursts += clockrules.bursts(t, ids, counts, total, clock, Pick, **kw)
            if len(ids) >= MIN_WINDOWS:
                others += (clockrules.silence(t, ids, counts, clock, Pick, **kw)
                           + clockrules.after_quiet(t, ids, counts, clock, Pick, **kw))
            continue
        if total >= 20:
            bursts += _bursts(t, ids, counts, total / tc.lines, sizes)
        if len(ids) >= MIN_WINDOWS:
            others += _silence(t, ids, nb) + _after_quiet(t, ids, nb)
    if clock is None and no_clock:
        for p in bursts + others:
            p.why += f" (by stretches of the file, not the clock: {no_clock})"
    bursts.sort(key=lambda p: -len(p.windows))  # the longest bursts first
    return bursts[:MAX_RATE_PICKS] + others[:MAX_RATE_PICKS]


def _bursts(t: bytes, ids, counts, share: float, sizes: list[int]) -> list[Pick]:
    out: list[Pick] = []
    run: list[int] = []
    peak = 0.0
    for b, c in zip(ids, counts):
        mu = share * sizes[b]
        if c >= 10 and c >= 10 * mu and c > mu + 6 * math.sqrt(mu) + 5:
            if run and b != run[-1] + 1:
                out.append(_burst_pick(t, run, peak))
                run, peak = [], 0.0
            run.append(b)
            peak = max(peak, c / max(mu, 1e-9))
    if run:
        out.append(_burst_pick(t, run, peak))
    return out


def _burst_pick(t: bytes, run: list[int], peak: float) -> Pick:
    return Pick(t, "burst", f"its rate jumps {min(peak, 999):.0f}x over {len(run)} window"
                            f"{'s' if len(run) != 1 else ''}", windows=run)


def _silence(t: bytes, ids, nb: int) -> list[Pick]:
    first, last = ids[0], ids[-1]
    span = last - first + 1
    after = nb - 1 - last
    if span >= MIN_WINDOWS and len(ids) >= 0.8 * span and after >= max(3, nb // 10):
        return [Pick(t, "silence", f"present in {len(ids)} of {span} windows, then silent for "
                                   f"the last {after} of {nb}", windows=[last])]
    return []


def _after_quiet(t: bytes, ids, nb: int) -> list[Pick]:
    gaps = [(b - a, a, b) for a, b in zip(ids, ids[1:])]
    if len(gaps) < 3:
        return []
    usual = sorted(g for g, _, _ in gaps)[len(gaps) // 2]
    g, a, b = max(gaps)
    if g >= max(MIN_WINDOWS, nb // 5) and g >= 4 * usual:
        return [Pick(t, "after-quiet", f"back after {g - 1} quiet windows (usually every "
                                       f"{usual})", windows=[b])]
    return []
