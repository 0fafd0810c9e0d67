"""Profile: code profiles a log's line shapes; rare shapes and error-level lines are the
candidates (and the rules of rlm/corpus/signals.py), grouped by shared identifiers, then by shape. A model may label and word each
group in one small call; that wording is optional: a failed call is declared, never a failed
chunk, because code read every line."""

from __future__ import annotations

from rlm.pipeline.codeonly.event_kinds import add_event_kinds, places
from rlm.pipeline.codeonly.timeline import describe_group
from rlm.pipeline.codeonly.wording import guard_label, wording_failed_note
from rlm.corpus.anomalies import rank_kinds
from rlm.corpus.lanes import kind_lanes
from rlm.corpus.logset import LogSet, where
from rlm.corpus.profile import profile_log, why_picked
from rlm.corpus.source import TextSource
from rlm.corpus.stories import story_ids
from rlm.corpus.timewindow import folder_window_lines, log_span, window_lines, window_note
from rlm.engine.candidates import Group, group_candidates, judge_group, numbered, withheld
from rlm.engine.mapper import Outcome, map_items
from rlm.render.kinds import kinds_markdown
from rlm.engine.events import Plan, UnitStarted
from rlm.engine.ledger import Unit, failed_unit
from rlm.engine.outcomes import Status
from rlm.engine.window import PROMPT_OVERHEAD_TOKENS
from rlm.schemas.report import Estimate
from rlm.pipeline.strategies.base import Context, Result, code_finding, done
from rlm.engine.estimate import announce
from rlm.engine import longrun

SHOWN_LINES, SHOWN_CHARS = 12, 400  # what one group's call shows (engine.candidates.numbered)


async def run(ctx: Context) -> Result:
    res = ctx.new_result()
    srcs = ctx.corpus.sources
    src = srcs[0] if len(srcs) == 1 else LogSet(srcs)  # a folder of logs: one log
    ranges, w = time_window(res, src, ctx.query.window)
    prof = profile_log(src, line_ranges=ranges)
    res.cov.bytes_scanned_by_code, res.cov.lines_scanned_by_code = prof.bytes, prof.lines
    if ranges is not None:
        res.cov.bytes_scanned_by_code = _window_bytes(src, ranges)
    _failed_shards(res, src, prof)
    if prof.overflow:
        res.cov.declared.append("more than 200,000 distinct line shapes: rarer shapes beyond "
                                "that were counted but not tracked")
    why_by_line: dict[int, str] = {}
    for tp in prof.templates:
        w = why_picked(tp, prof.lines)
        for ln in tp.lines:
            why_by_line.setdefault(prof.record_of.get(ln, ln), w)
    groups = group_candidates(src, prof.candidates, why_by_line,
                              ids_of=story_ids(src, prof.table, prof.candidates))
    res.reasons.append(
        f"profile: {prof.templates_total:,} event kinds in {prof.lines:,} lines; "
        f"{len(prof.candidates)} candidate lines (shapes seen at most {prof.rare_max} "
        f"time{'s' if prof.rare_max != 1 else ''}, error level, failure words, rare in their "
        f"component, bursts, silences, returns after a quiet stretch) in {len(groups)} groups")
    if not ctx.code_only:
        est = sum(ctx.model.count_tokens(numbered(g)) for g in groups)
        res.estimate = Estimate(calls=len(groups) + 1,
                                prompt_tokens=est + PROMPT_OVERHEAD_TOKENS * (len(groups) + 1))
        res.cov.chunks_total = len(groups)
    if ctx.opts.dry_run:
        if not groups:
            res.answer_parts.append("Code found no rare or error-level lines.")
        return res
    kinds = rank_kinds(prof, src)  # the ranked event kinds: code's table, first (item 7)
    res.event_kinds = [r.as_dict() for r in kinds]  # the report's `event_kinds` (JSON, HTML)
    if prof.table is not None and kinds:  # where all their lines fall: the timeline's lanes
        res.timeline = kind_lanes(src, prof.table, [r.kind for r in kinds], ranges)
    if not groups:
        res.answer_parts.append("Code found no rare lines and no line picked by its rules"
                                + (" beyond the event kinds above." if kinds else "."))
        add_event_kinds(res, kinds, kinds_markdown(kinds), _place(src, prof, kinds))
        return res
    if ctx.code_only:
        res.answer_parts.append(
            f"Code profiled all {prof.lines:,} lines and found {len(prof.candidates)} "
            f"candidate lines in {len(groups)} groups; no model was used.")
        _findings(ctx, res, src, [Outcome(g) for g in groups], prof.record_end,
                  prof.rules_by_line)
        add_event_kinds(res, kinds, kinds_markdown(kinds), _place(src, prof, kinds))
        return res

    def unit(g: Group) -> Unit:
        return Unit(g.id, src.display, g.lines[0], g.lines[-1])

    async def work(g: Group):
        ctx.emit(UnitStarted(g.id, src.display, g.lines[0], g.lines[-1]))
        return await judge_group(ctx.sub, g, ctx.q, ctx.budget, ctx.opts.timeout)

    longrun.check(ctx, res.estimate, res.reasons)
    ctx.emit(Plan(len(groups), ctx.opts.concurrency))
    announce(ctx, res.estimate)  # measured-speed seconds; progress flags a 3x overrun
    res.answer_parts.append(
        f"No fan-out was needed: code profiled all {prof.lines:,} lines and the model read "
        f"only the {len(prof.candidates)} candidate lines, in {len(groups)} small calls.")
    outs = await map_items(groups, work, key=lambda g: g.id, concurrency=ctx.opts.concurrency,
                           budget=ctx.budget, cancel_scope=ctx.session.scope,
                           on_outcome=lambda o: done(ctx, unit(o.item), o))
    _findings(ctx, res, src, outs, prof.record_end, prof.rules_by_line)
    for g in groups:  # named as skipped by design (code still reports them): not a gap
        for ln, why in withheld(g):
            res.cov.skipped.append({"path": f"{src.display}:{ln}", "incomplete": False,
                                    "reason": f"reads like an instruction to a model ({why}): "
                                              "withheld from the model"})
    add_event_kinds(res, kinds, kinds_markdown(kinds), _place(src, prof, kinds))
    return res


def _place(src, prof, kinds):
    """The top event kind's nodes or hosts, counted over its lines (one file, whole log)."""
    if not kinds or isinstance(src, LogSet) or prof.table is None or prof.lines != src.line_count:
        return None
    return places(src, prof.table, kinds[0].kind)


def _failed_shards(res: Result, src, prof) -> None:
    """Shards no worker could profile: each named with its file, lines and bytes (exit 3);
    their bytes were not scanned by code (their lines were only counted, for the numbering)."""
    if prof.reused_shards:
        res.cov.declared.append(
            f"{prof.reused_shards} of {prof.shards} shards were taken from the tables an "
            "earlier scan that did not finish kept; the others were scanned again")
    files = src.sources if isinstance(src, LogSet) else [src]
    display = {str(f.path): f.display for f in files}
    for f in prof.failed_shards:
        sh = f.shard
        res.cov.bytes_scanned_by_code -= sh.bytes
        res.cov.chunks_failed.append(failed_unit(
            Unit(sh.id, display.get(sh.path, sh.path), f.line_start, f.line_end), Status.FAILED,
            f"not profiled: {f.reason}; bytes {sh.start:,}-{sh.end:,}"))


def time_window(res: Result, src, w):
    """(line ranges, window) when the question names a time window ("between 14:00 and
    14:30", "around 14:05") and the log's lines carry times; (None, None) otherwise. A
    folder's ranges are in its global numbering: each file is searched by time on its own."""
    if w is None:
        return None, None
    if isinstance(src, LogSet):
        ranges, per_file = folder_window_lines(src, w)
        totals = {f.display: f.line_count for f in src.sources}
    else:
        ranges = window_lines(src, w)
        per_file, totals = {src.display: ranges}, {src.display: src.line_count}
    lines = sum(b - a + 1 for a, b in ranges)
    res.reasons.append(f"the question asks {w.label}: code profiles only the {lines:,} lines "
                       "in it, found by binary search on each file's timestamps")
    if not lines:  # say it first: "no rare lines" would read as "nothing unusual happened"
        span = "" if isinstance(src, LogSet) else log_span(src)
        res.answer_parts.append(f"No line of the log falls {w.label}" + (
            f": its lines run {span}." if span else "."))
    res.cov.declared.append(window_note(w, per_file, totals))
    res.where.window(per_file)
    return ranges, w


def _window_bytes(src, ranges: list[tuple[int, int]]) -> int:
    """Bytes of the window's lines, in a file or a folder (a range never spans two files)."""
    total = 0
    for a, b in ranges:
        (f, la), (_, lb) = where(src, a), where(src, b)
        total += (f.offsets[lb] if lb < f.line_count else f.size) - f.offsets[la - 1]
    return total


def _findings(ctx: Context, res: Result, src: TextSource | LogSet, outs: list[Outcome],
              record_end: dict[int, int], rules_by_line: dict[int, list[str]]) -> None:
    """Code-found groups become findings; the model's label and summary only add words.
    `src` is a file, or a folder's LogSet (global line numbers, located per file here)."""
    n = failed = 0
    reason = ""
    for o in outs:
        g: Group = o.item
        if o.ok and o.result is not None:
            g = o.result
            res.cov.chunks_ok += 1
            res.cov.lines_read_by_model += min(len(g.lines), SHOWN_LINES)
            res.cov.bytes_read_by_model += sum(len(g.texts[ln][:SHOWN_CHARS].encode())
                                               for ln in g.lines[:SHOWN_LINES])
            for ln in g.lines[:SHOWN_LINES]:
                f, local = where(src, ln)
                res.where.read(f.display, local, local)
        elif not o.ok:
            g.error, failed, reason = o.error, failed + 1, reason or (o.error or "failed")
        texts = [g.texts[ln] for ln in g.lines]
        g.label, label_note = guard_label(g.label, texts, g.why)
        # code states what it knows; the model's summary is added only when usable
        at = {ln: where(src, ln) for ln in g.lines}  # per-file line numbers in a folder
        claim = describe_group(g.kind, g.key, g.why, [(at[ln][0].display, at[ln][1], g.texts[ln])
                                                       for ln in g.lines])
        claim += f" (model: {g.claim})" if g.claim else ""
        note = label_note or (None if g.claim or ctx.code_only
                              else f"no usable model summary ({g.error or 'empty'})")
        for ln in g.lines:
            n += 1
            end = record_end.get(ln, ln)  # a stack trace stays with its header
            fsrc, local = at[ln]
            res.findings.append(code_finding(f"f{n}", claim, fsrc, local, local + end - ln,
                                             True, g.id,
                                             label=g.label, group=g.id, note=note,
                                             rules=rules_by_line.get(ln) or None))
        res.groups.append({"id": g.id, "kind": g.kind, "key": g.key, "why": g.why,
                           "label": g.label, "claim": g.claim,
                           "lines": [at[ln][1] for ln in g.lines],
                           "paths": [at[ln][0].display for ln in g.lines],
                           "rules": sorted({r for ln in g.lines
                                            for r in rules_by_line.get(ln, [])})})
    if failed:
        res.cov.declared.append(wording_failed_note(failed, len(outs), reason))
