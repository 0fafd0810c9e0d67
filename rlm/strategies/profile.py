"""Profile: code profiles a log's line shapes; rare shapes and error-level lines are the
candidates, grouped by shared identifiers, then by shape. A model may label and word each
group in one small call; that wording is optional: a failed call is declared, never a failed
chunk, because code read every line."""

from __future__ import annotations

from rlm.codeonly.timeline import describe_group
from rlm.codeonly.wording import guard_label, wording_failed_note
from rlm.corpus.profile import profile_log
from rlm.corpus.source import TextSource
from rlm.engine.candidates import Group, group_candidates, judge_group, numbered
from rlm.engine.mapper import Outcome, map_items
from rlm.run.events import Plan, UnitStarted
from rlm.run.ledger import Unit
from rlm.run.window import PROMPT_OVERHEAD_TOKENS
from rlm.schemas import Estimate
from rlm.strategies.base import Context, Result, code_finding, done

SHOWN_LINES, SHOWN_CHARS = 12, 400  # what one group's call shows (engine.candidates.numbered)


async def run(ctx: Context) -> Result:
    res = ctx.new_result()
    src = ctx.corpus.sources[0]
    prof = profile_log(src)
    res.cov.bytes_scanned_by_code, res.cov.lines_scanned_by_code = prof.bytes, prof.lines
    if prof.overflow:
        res.cov.declared.append("more than 200,000 distinct line shapes: rarer shapes beyond "
                                "that were counted but not tracked")
    why_by_line: dict[int, str] = {}
    for tp in prof.templates:
        w = (f"a line shape seen {tp.count} time{'s' if tp.count != 1 else ''} in "
             f"{prof.lines:,} lines" + (", error level" if tp.error_level else ""))
        for ln in tp.lines:
            why_by_line.setdefault(prof.record_of.get(ln, ln), w)
    groups = group_candidates(src, prof.candidates, why_by_line)
    res.reasons.append(
        f"profile: {prof.templates_total:,} line shapes in {prof.lines:,} lines; "
        f"{len(prof.candidates)} candidate lines (shapes seen at most {prof.rare_max} "
        f"time{'s' if prof.rare_max != 1 else ''}, or error level) in {len(groups)} groups")
    if not ctx.code_only:
        est = sum(ctx.model.count_tokens(numbered(g)) for g in groups)
        res.estimate = Estimate(calls=len(groups) + 1,
                                prompt_tokens=est + PROMPT_OVERHEAD_TOKENS * (len(groups) + 1))
        res.cov.chunks_total = len(groups)
    if ctx.opts.dry_run or not groups:
        if not groups:
            res.answer_parts.append("Code found no rare or error-level lines.")
        return res
    if ctx.code_only:
        res.answer_parts.append(
            f"Code profiled all {prof.lines:,} lines and found {len(prof.candidates)} "
            f"candidate lines in {len(groups)} groups; no model was used.")
        _findings(ctx, res, src, [Outcome(g) for g in groups], prof.record_end)
        return res

    def unit(g: Group) -> Unit:
        return Unit(g.id, src.display, g.lines[0], g.lines[-1])

    async def work(g: Group):
        ctx.emit(UnitStarted(g.id, src.display, g.lines[0], g.lines[-1]))
        return await judge_group(ctx.sub, g, ctx.q, ctx.budget, ctx.opts.timeout)

    ctx.emit(Plan(len(groups), ctx.opts.concurrency))
    res.answer_parts.append(
        f"No fan-out was needed: code profiled all {prof.lines:,} lines and the model read "
        f"only the {len(prof.candidates)} candidate lines, in {len(groups)} small calls.")
    outs = await map_items(groups, work, key=lambda g: g.id, concurrency=ctx.opts.concurrency,
                           budget=ctx.budget, cancel_scope=ctx.session.scope,
                           on_outcome=lambda o: done(ctx, unit(o.item), o))
    _findings(ctx, res, src, outs, prof.record_end)
    return res


def _findings(ctx: Context, res: Result, src: TextSource, outs: list[Outcome],
              record_end: dict[int, int]) -> None:
    """Code-found groups become findings; the model's label and summary only add words."""
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
        elif not o.ok:
            g.error, failed, reason = o.error, failed + 1, reason or (o.error or "failed")
        texts = [g.texts[ln] for ln in g.lines]
        g.label, label_note = guard_label(g.label, texts, g.why)
        # code states what it knows; the model's summary is added only when usable
        claim = describe_group(g.kind, g.key, g.why, [(src.display, ln, g.texts[ln])
                                                       for ln in g.lines])
        claim += f" (model: {g.claim})" if g.claim else ""
        note = label_note or (None if g.claim or ctx.code_only
                              else f"no usable model summary ({g.error or 'empty'})")
        for ln in g.lines:
            n += 1
            end = record_end.get(ln, ln)  # a stack trace stays with its header
            res.findings.append(code_finding(f"f{n}", claim, src, ln, end, True, g.id,
                                             label=g.label, group=g.id, note=note))
        res.groups.append({"id": g.id, "kind": g.kind, "key": g.key, "why": g.why,
                           "label": g.label, "claim": g.claim, "lines": g.lines})
    if failed:
        res.cov.declared.append(wording_failed_note(failed, len(outs), reason))
