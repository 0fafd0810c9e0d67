"""Counting questions about logs ("how many X?", "which IP had the most X?", "top 5 users by X",
"X per component"), answered by code alone from the typed query (rlm.pipeline.query).

What is counted is a predicate code states: the lines mentioning the question's anchors, the
lines of a level ("how many errors?"), every line, or the templates whose words carry the
question's words (rlm.corpus.predicate over rlm.corpus.templates). When no template carries
them all, code says so, names the nearest templates and gives no number (exit 3). A group-by
slot is read from every matched line (rlm.corpus.slots), so the groups add up to the total.
Every matching line number is kept (as ranges) for the JSON report; the answer shows a sample
and says how much of it it shows (rlm.pipeline.codeonly.count_text).
"""

from __future__ import annotations

import re

from dataclasses import dataclass, field

from rlm.pipeline.codeonly import count_text, failure_text, literal_check
from rlm.corpus.count_scan import CountSpec, scan_counts
from rlm.corpus.counts import _LOGCAT_LINE
from rlm.corpus.predicate import match, phrase_of, question_concepts
from rlm.corpus.slots import slot_value
from rlm.corpus.question_table import table_for
from rlm.corpus.timewindow import window_lines
from rlm.engine.ledger import Unit, failed_unit
from rlm.engine.outcomes import Status
from rlm.pipeline.strategies.base import Context, Result, code_finding

EXAMPLES = 10


@dataclass
class Tally:
    """What code counted: totals, groups, kinds (templates), examples, every line number."""

    total: int = 0
    scanned: int = 0
    groups: dict[str, list] = field(default_factory=dict)  # key -> [count, src, first line]
    kinds: dict[str, list] = field(default_factory=dict)  # template -> [count, src, first line]
    examples: list[tuple] = field(default_factory=list)  # (src, line)
    lines: dict[str, list[list[int]]] = field(default_factory=dict)  # path -> [[a, b], ...]
    templates: int = 0  # templates that carry the question's words (their lines may not
    # hold its anchors or literals)
    nearest: list = field(default_factory=list)  # templates closest to an unmatched predicate
    related: list = field(default_factory=list)  # templates matched by synonym only: named
    apart: list = field(default_factory=list)  # templates holding the words only loosely: named
    shadow: list = field(default_factory=list)  # many more lines hold all the words but one
    leveled: list = field(default_factory=lambda: [0, 0])  # sampled lines: with a level, all
    how: str = ""  # "phrase" / "words": the templates were kept for holding the question's
    said: str = ""  # words as it wrote them; `said` is what they hold
    component: dict[str, str] = field(default_factory=dict)  # template -> its main component
    failures: failure_text.FailureKinds = field(default_factory=failure_text.FailureKinds)
    files: int = 1  # files counted over (a folder's logs)
    failed: list[tuple] = field(default_factory=list)  # (src, FailedShard): not counted

    def add(self, src, ln: int, kind: str | None, key: str | None) -> None:
        """One line (the failure kinds' pass, on the driver)."""
        self.total += 1
        if len(self.examples) < EXAMPLES:
            self.examples.append((src, ln))
        runs = self.lines.setdefault(src.display, [])
        if runs and runs[-1][1] == ln - 1:
            runs[-1][1] = ln
        else:
            runs.append([ln, ln])
        for table, k in ((self.kinds, kind), (self.groups, key)):
            if k is None:
                continue
            g = table.get(k)
            if g is None:
                table[k] = [1, src, ln]
            else:
                g[0] += 1

    def fold(self, src, part) -> None:
        """One file's tally (rlm.corpus.count_scan), after the files before it."""
        self.total += part.total
        self.examples += [(src, ln) for ln in part.examples[:EXAMPLES - len(self.examples)]]
        if part.runs:
            self.lines.setdefault(src.display, []).extend(part.runs)
        for table, other in ((self.kinds, part.kinds), (self.groups, part.groups)):
            for k, (c, ln) in other.items():
                g = table.get(k)
                if g is None:
                    table[k] = [c, src, ln]
                else:
                    g[0] += c


LEVEL_SAMPLE = 400  # lines read, evenly spread, to see whether a log writes a level at all


def _sample_levels(src, tally: Tally) -> None:
    """How many of LEVEL_SAMPLE lines spread over the file write a level (rlm.corpus.severity):
    a syslog or a Mac log writes none on most lines, and there "error-level lines" are only
    the few whose message happens to start with `ERROR:`."""
    from rlm.corpus.severity import severity

    n = src.line_count
    for ln in range(1, n + 1, max(1, n // LEVEL_SAMPLE)):
        tally.leveled[1] += 1
        tally.leveled[0] += severity(src.line(ln, 400)) is not None


def _by_predicate(q) -> bool:
    """What is counted is the templates carrying the question's words (and anchors and
    literals, when it names them, are more that a line must hold)."""
    return not q.level and not q.failures and bool(q.content_words)


def _count_failures(src, ranges, tally: Tally, kinds: failure_text.FailureKinds, key) -> None:
    """Every line of the kinds that report a failure (rlm.corpus.anomalies), and the kinds
    the rule leaves out, named apart."""
    from rlm.corpus.anomalies import failure_line_kinds, left_out, severity_label
    from rlm.corpus.templates import build_table

    table = build_table(src, ranges, exact_last=False)
    for ln, k in failure_line_kinds(table, src, ranges):
        text = src.line(ln, 400) if key else ""
        tally.add(src, ln, k.template, key(text, k.template) if key else None)
        kinds.add(src, ln, k, severity_label(k))
    for k, why in left_out(table):
        kinds.leave_out(src, k, why)


_HEADER_SLOTS = {"component", "pid", "host", "level"}  # fields a log writes on every line


def _count_file(ctx: Context, src, tally: Tally) -> None:
    q = ctx.query
    ranges = window_lines(src, q.window) if q.window else None
    spans = ranges if ranges is not None else [(1, src.line_count)]
    tally.scanned += sum(max(0, b - a + 1) for a, b in spans)
    slot = q.group_by

    def key(text: str, kind: str | None) -> str | None:
        return slot_value(slot, text, kind) if slot else None

    if q.failures:  # on the driver: the failure kinds' own pass (rlm.corpus.anomalies)
        _count_failures(src, ranges, tally, tally.failures, key if slot else None)
        return
    literals = tuple(lit.pattern() for lit in q.literals if not lit.op)
    compare = tuple((lit.pattern(), lit.op, float(lit.values[0])) for lit in q.literals if lit.op)
    needle = q.literals[0].needle() if q.literals else None
    if _by_predicate(q):
        table = table_for(src, ranges)
        m = match(table.rows, q.words, lambda row: src.line(row.first_line, 400))
        tally.nearest += [(s, src) for s in m.nearest]
        tally.related += [(s, src) for s in m.related]
        tally.apart += [(s, src) for s in m.apart]
        tally.shadow += [(s, src) for s in m.shadow]
        if m.how and not tally.how:
            tally.how, tally.said = m.how, m.said
        tally.component.update({s.row.text: s.row.component for s in m.rows if s.row.component})
        tally.templates += len(m.rows)
        if not m.rows:
            return
        spec = CountSpec(shapes=table.shapes_of([s.row for s in m.rows]), slot=slot,
                         anchors=tuple(q.anchors), literals=literals, needle=needle,
                         compare=compare, needs=tuple(m.needs.items()))
    else:
        logcat = bool(q.level and src.line_count and _LOGCAT_LINE.match(src.line(1, 200)))
        if q.level:
            _sample_levels(src, tally)
        spec = CountSpec(anchors=tuple(q.anchors), level=q.level, logcat=logcat, slot=slot,
                         literals=literals, needle=needle, compare=compare)
    if src.size:  # shard by shard on the run's executor (rlm.corpus.count_scan)
        scan = scan_counts(src, spec, ranges)
        tally.fold(src, scan.table)
        tally.failed += [(src, f) for f in scan.failed]


async def run(ctx: Context) -> Result:
    res = ctx.new_result()
    q = ctx.query
    concepts = question_concepts(q.words) if _by_predicate(q) else []
    tally = Tally(files=len(ctx.corpus.sources))
    doubts: list[str] = []  # why a count of the question's literals is not sure
    if q.unsure:
        res.cov.gaps.append("code could not tell what a number in the question means: no "
                            "number is given")
    elif _by_predicate(q) and not concepts:
        res.cov.gaps.append("code found no words in the question to count by")
    else:
        for src in ctx.corpus.sources:
            _count_file(ctx, src, tally)
        if not _by_predicate(q) or tally.templates:  # templates matched: a zero is a count
            doubts = literal_check.doubts(ctx.corpus.sources, q.literals, tally)
    for src in ctx.corpus.sources:
        res.cov.bytes_scanned_by_code += src.size
        res.cov.lines_scanned_by_code += src.line_count
    _failed_shards(res, tally)
    confident = (not _by_predicate(q) or bool(tally.templates)) and not q.unsure
    res.reasons.append(f"a counting question about a log: code counts {q.predicate_words()}"
                       f"{' per ' + q.group_by if q.group_by else ''}, {q.scope(tally.files)}, "
                       "over every line; the numbers come from code, never a model")
    _say_doubts(res, q, tally, concepts, confident, bool(doubts))
    if q.unsure:
        res.answer_parts.append(count_text.unsure(q.unsure))
    elif doubts:
        confident = False
        res.answer_parts.append(count_text.doubtful(doubts))
        res.cov.gaps.append("no line holds what the question's number names: no number "
                            "is given")
    elif not confident:
        res.answer_parts.append(count_text.unmatched(q, concepts, tally.nearest))
        res.cov.gaps.append("code could not map the question to a template of the log: "
                            "no number is given")
    elif q.failures and not q.group_by:
        cites = tally.failures.sample()
        res.answer_parts.append(failure_text.answer(q, tally.total, tally.scanned,
                                                    tally.failures, len(cites), tally.files))
        tally.examples = [(src, ln) for src, ln, _ in cites]
    else:
        res.answer_parts.append(count_text.answer(q, concepts, tally))
    res.matched = count_text.matched(q, concepts, tally, confident)
    if q.failures and not q.group_by:
        res.matched["holds"] = failure_text.holds(tally.total, len(tally.kinds),
                                                  len(tally.examples))
        _cite_failures(res, tally)
    else:
        _cite(res, q, tally)
    if q.window:
        res.cov.declared.append(f"counted only the lines {q.window.label} (found on each "
                                f"file's own timestamps): {tally.scanned:,} lines")
    return res


def _say_doubts(res: Result, q, tally: Tally, concepts: list[str], confident: bool,
                doubted: bool) -> None:
    """What makes a count code made not sure, said before it (exit 3): the lines name no value
    of the field grouped by; a header field code cannot read on most lines; templates of
    different writers; many more lines holding all of the question's words but one."""
    if confident and q.group_by and tally.total and set(tally.groups) == {"(none)"}:
        res.cov.gaps.append(f"none of the {tally.total:,} matching lines names a {q.group_by}: "
                            "code cannot group them")
    elif (confident and q.group_by in _HEADER_SLOTS
          and 2 * tally.groups.get("(none)", [0])[0] > tally.total):
        # a field of every line's header (HealthApp's `|Step_LSC|`) that code does not read
        # in this log, so most lines name none: the leader of the few that do is not the log's
        # (an ip, a user, an instance is on some lines only: those rank as they are)
        none = tally.groups["(none)"][0]
        res.answer_parts.append(f"Not sure: {none:,} of the {tally.total:,} lines name no "
                                f"{q.group_by} that code can read, so the ranking below holds "
                                f"only the other {tally.total - none:,} and may not be the "
                                "log's.")
        res.cov.gaps.append(f"{none:,} of the {tally.total:,} matching lines name no "
                            f"{q.group_by} that code can read: the ranking holds only the other "
                            f"{tally.total - none:,}")
    # one writer whatever its pid: `sshd`, `sshd[<*>]:`; a module is another (`sshd(pam_unix)`
    # logs the same failed login as `sshd`)
    comps = sorted({re.sub(r"\[[^\]]*\]:*$|:+$", "", tally.component[k]) or tally.component[k]
                    for k in tally.kinds if k in tally.component})
    phrases = {phrase_of(k, concepts) for k in tally.kinds}
    if confident and len(phrases) > 1 and len(comps) > 1:  # other words, other writers
        res.answer_parts.append(count_text.mixed(comps))
        res.cov.gaps.append("the matching templates come from different components: the total "
                            "may count one happening more than once")
    with_level, sampled = tally.leveled
    if confident and q.level and sampled and 2 * with_level < sampled:
        res.answer_parts.append(count_text.levels_rare(q.level, with_level, sampled,
                                                       tally.total))
        res.cov.gaps.append(f"the log writes a level on {with_level:,} of {sampled:,} sampled "
                            f"lines: {q.level}s written in words are not counted")
    if confident and tally.shadow and not q.unsure and not doubted:
        n = sum(sc.row.count for sc, _ in tally.shadow)
        res.answer_parts.append(count_text.shadowed(tally.shadow, concepts, tally.total))
        res.cov.gaps.append(f"{n:,} lines hold all of the question's words but one, against "
                            f"{tally.total:,} counted: the count may answer a narrower question")


def _failed_shards(res: Result, tally: Tally) -> None:
    """Shards no worker could count: named with their file, lines and bytes (exit 3); the
    numbers above then leave them out, and the answer is not complete."""
    for src, f in tally.failed:
        sh = f.shard
        res.cov.bytes_scanned_by_code -= sh.bytes
        res.cov.lines_scanned_by_code -= f.lines
        res.cov.chunks_failed.append(failed_unit(
            Unit(sh.id, src.display, f.line_start, f.line_end), Status.FAILED,
            f"not counted: {f.reason}; bytes {sh.start:,}-{sh.end:,}"))


def _cite_failures(res: Result, tally: Tally) -> None:
    rows = tally.failures.rows
    for n, (src, ln, t) in enumerate(tally.failures.sample(), 1):
        r = rows[t]
        claim = (f"{r['severity']} `{count_text.shown(t, 80)}` ({r['count']:,} "
                 f"line{'s' if r['count'] != 1 else ''}): one of the {tally.total:,} lines "
                 "that report a failure")
        res.findings.append(code_finding(f"f{n}", claim, src, ln, ln, True, None,
                                         rules=["failure"]))


def _cite(res: Result, q, tally: Tally) -> None:
    if q.group_by:
        top = sorted(tally.groups.items(), key=lambda kv: (-kv[1][0], kv[1][2]))[:count_text.TOP]
        cites = [(src, ln, f"{k}: {c:,} line{'s' if c != 1 else ''} (first shown)")
                 for k, (c, src, ln) in top]
    else:
        cites = [(src, ln, f"one of the {tally.total:,} {q.predicate_words()}")
                 for src, ln in tally.examples]
    for n, (src, ln, claim) in enumerate(cites, 1):
        res.findings.append(code_finding(f"f{n}", claim, src, ln, ln, True, None, rules=["count"]))
