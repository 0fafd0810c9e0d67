"""Direct: one call reads the whole (small, single-file) corpus; its cites become findings
after rlm.verify.evidence checks that each cited line exists. A log question with a time window
("between 14:00 and 14:30") shows the model only the window's lines."""

from __future__ import annotations

from rlm.verify import evidence
from rlm.corpus.chunk import Chunk, Part, ShownLines
from rlm.corpus.lines import MAX_LINE_CHARS
from rlm.corpus.timewindow import log_window, window_note
from rlm.engine.estimate import announce
from rlm.engine import fit
from rlm.engine.events import Gate
from rlm.engine.window import PROMPT_OVERHEAD_TOKENS
from rlm.schemas.report import Estimate
from rlm.verify.support import supports
from rlm.pipeline.codeonly.answers import ranked_by_code
from rlm.pipeline.strategies.base import Context, Result, code_finding, one_call, unit_of

EXACT_COUNT_MAX_BYTES = 400_000  # below this the model's tokenizer counts the material exactly


async def run(ctx: Context) -> Result:
    if ctx.code_only:
        return ranked_by_code(ctx)
    res = ctx.new_result()
    src = ctx.corpus.sources[0]
    chunk = Chunk("c0001", (Part(src.display, 1, src.line_count),), src)
    ranges, w = log_window(ctx.corpus.probe.kind, src, ctx.query.window)
    if w is not None:  # only the window's lines are shown (and can be cited)
        res.where.window({src.display: ranges})
        res.cov.declared.append(window_note(w, {src.display: ranges},
                                            {src.display: src.line_count}))
        if not ranges:
            res.answer_parts.append(f"No line of the log falls in the time window {w.label}; "
                                    "no model call was made.")
            return res
        chunk = Chunk("c0001", tuple(Part(src.display, a, b) for a, b in ranges), src)
    material = chunk.numbered_text(MAX_LINE_CHARS)
    est = (fit.estimate(ctx.model, material) if src.size < EXACT_COUNT_MAX_BYTES
           else ctx.est_tokens(src.size))
    if est > ctx.window and not ctx.decision.forced:
        return await _to_fanout(ctx, f"its own text is ~{est:,} tokens")
    res.estimate = Estimate(calls=1, prompt_tokens=est + PROMPT_OVERHEAD_TOKENS)
    res.cov.chunks_total = 1
    if ctx.opts.dry_run:
        return res
    announce(ctx, res.estimate)  # measured-speed seconds; progress flags a 3x overrun
    o = await one_call(ctx, "direct", chunk, material=material)
    if o.too_long and not ctx.decision.forced:
        return await _to_fanout(ctx, "the server said it does not fit the model's context")
    if not o.ok:
        res.fail(unit_of(chunk), o)
        return res
    res.read(chunk)
    res.withheld(chunk, len(o.result.cites))
    res.model_answer = o.result.answer.strip()
    res.shown = material
    shown = ShownLines(chunk)
    for ln in dict.fromkeys(o.result.cites):  # a cite without a quote: the line must exist
        ev = res.evidence.add(evidence.verify_lines(shown, src.display, ln, ln, None,
                                                    require_quote=False))
        if ev.ok:  # and it must share a word with the answer (rlm.verify.support): corpus text
            # that says "cite line 1 as proof" does not get line 1 verified
            ok = supports(res.model_answer, "\n".join(src.lines(ln, ln)))
            note = None if ok else "the answer shares no word with this line: not support"
            if not chunk.shows(src.display, ln, ln):  # never shown: it cannot support
                ok, note = False, f"outside the time window {w.label}: not shown to the model"
            res.findings.append(code_finding(f"f{len(res.findings) + 1}", "cited by the answer",
                                             src, ln, ln, ok, chunk.id, note=note))
    if w is None:
        res.answer_parts.append(f"Read directly: all {src.line_count:,} lines in one call; "
                                "no chunking or fan-out was needed.")
    else:
        res.answer_parts.append(f"Read directly: the {chunk.lines:,} lines of the time window "
                                f"{w.label} in one call; the other "
                                f"{src.line_count - chunk.lines:,} lines, outside it, were not "
                                "shown to the model.")
    return res


async def _to_fanout(ctx: Context, why: str) -> Result:
    """The file is too big for one call after all: it is read in chunks, never dropped."""
    from rlm.pipeline.strategies import fanout

    ctx.decision.strategy = "fanout"
    ctx.decision.reasons.append(f"not one call after all: {why}, over the usable window of "
                                f"{ctx.window:,}: fan-out")
    ctx.emit(Gate("fanout", list(ctx.decision.reasons)))  # what runs now, in the record too
    return await fanout.run(ctx)
