"""The last step after a fan-out: a fresh, clean prompt with the question and the verified
findings only (rlm.engine.synth), whose answer becomes the model's answer."""

from __future__ import annotations

from rlm.engine.synth import synthesize
from rlm.pipeline.strategies.base import Context, Result


async def finish(ctx: Context, res: Result) -> None:
    verified = [f for f in res.findings if f.verified]
    if not verified:
        res.answer_parts.append("No verified finding answers the question: the chunks read "
                                "gave no claim whose evidence checked out.")
        return
    if ctx.budget.interrupted:
        return
    syn = await synthesize(ctx.model, ctx.q, verified, ctx.budget, ctx.window, ctx.opts.timeout)
    if syn.cut_note:
        res.cov.declared.append(syn.cut_note)
        if res.reduce is not None:
            res.reduce.unmerged = len(verified) - syn.used
    if syn.error:
        res.answer_parts.append(f"Synthesis call failed ({syn.error}); the verified findings "
                                "are listed below as code found them.")
    res.model_answer = syn.text
