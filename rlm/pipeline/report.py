"""`rlm ask`'s report: the gate's decision, a strategy's result and the session's usage, with
coverage closed by the one ledger (rlm.engine.ledger)."""

from __future__ import annotations

from rlm.redact import model as redact_model
from rlm.pipeline.codeonly import answers as by_code
from rlm.engine.estimate import fill_seconds
from rlm.models.endpoints import endpoint_usage
from rlm.models.none import NOTICE as NO_MODEL_NOTICE
from rlm.models.profile import profile_of
from rlm.corpus.lanes import span_record
from rlm.corpus.logset import LogSet
from rlm.engine import covmap, ledger
from rlm.schemas.report import CorpusInfo, EvidenceCounts, GateInfo, Report, UsageInfo
from rlm.pipeline.strategies.base import Context, Result


COMPLETION_TOKENS_PER_CALL = 80  # a third of a call's max_tokens, as measured on the recipes


def build(ctx: Context, res: Result) -> Report:
    s, dec = ctx.session, ctx.decision
    est = res.estimate
    if est.seconds is None:
        fill_seconds(s.model, est)  # from the model's measured speed (rlm.engine.estimate)
    u = s.budget.usage
    rep = Report(command=s.opts.command, question=ctx.q,
                 corpus=CorpusInfo(**ctx.corpus.probe.as_corpus()), strategy=dec.strategy,
                 gate=GateInfo(reasons=dec.reasons + res.reasons, estimate=est),
                 model=getattr(s.model, "name", ""), tier=profile_of(s.model).tier,
                 run_id=s.run_id, dry_run=s.opts.dry_run,
                 findings=res.findings, groups=res.groups,
                 evidence=EvidenceCounts(**res.evidence.as_dict()),
                 usage=UsageInfo(calls=u.calls, prompt_tokens=u.prompt_tokens,
                                 completion_tokens=u.completion_tokens,
                                 cached_calls=u.cached_calls,
                                 endpoints=endpoint_usage(s.model, s.sub)))
    if res.reduce is not None:
        rep.reduce = res.reduce
    rep.event_kinds = res.event_kinds  # rlm.corpus.anomalies (profile runs)
    rep.timeline = res.timeline  # rlm.corpus.lanes (profile runs)
    if rep.timeline is None and rep.corpus.kind == "log" and not s.opts.dry_run:
        rep.timeline = log_span(ctx.corpus.sources)  # other log answers: the whole clock
    rep.aggregate = getattr(res, "aggregate", None)  # rlm.pipeline.aggregate_map (counting questions)
    rep.matched = res.matched
    # how code read the question (an aggregate's records are read by a model: not said here)
    rep.read_as = (ctx.query.read_as(files=ctx.corpus.probe.files)
                   if ctx.query and dec.strategy != "aggregate" else "")
    cov = res.cov
    if s.opts.dry_run:
        redact_model.declare(s.redaction, rep, [])  # what a run would do
        rep.answer = "Dry run: probe, gate and estimate only; no model call was made."
        rep.coverage = ledger.close(cov, [], dry_run=True)
        return rep
    cov.interrupted = s.budget.interrupted
    redact_model.declare(s.redaction, rep, cov.declared)
    parts = list(res.answer_parts)
    if ctx.code_only:
        parts.insert(0, NO_MODEL_NOTICE)
        by_code.finish_coverage(cov, dec.strategy, s.budget.interrupted_by)
    else:
        ledger.close(cov, ledger.read_account(cov, dec.strategy, u.calls),
                     interrupted_by=s.budget.interrupted_by)
    cov.map = covmap.build(ctx.corpus.sources, res.where, cov)
    rep.coverage = cov
    # the answer only: the model's words, then code's notes (no findings, no coverage: the
    # report carries those as data, and rlm.render draws them)
    # code's headline first (what was found), then the model's words, then how
    from rlm.pipeline.headline import budget_stop, headline

    head = headline(rep, parts)
    if res.headline:  # code's own first sentence (the top event kind), then the rules' groups
        rules = [g for g in rep.groups if g.get("kind") != "event"]
        events = {g["id"] for g in rep.groups if g.get("kind") == "event"}
        also = headline(rep.model_copy(update={
            "groups": rules, "findings": [f for f in rep.findings if f.group not in events]}),
            parts) if rules else None
        head = res.headline + (" Also picked by code's rules: " + also.removeprefix("**Found:** ")
                               if also else "")
    stop = budget_stop(rep, s.budget)
    if head and head.startswith("**Found:** ") and head[11:] in parts:
        parts = [p for p in parts if p != head[11:]]  # the timeline's summary leads
    body = [p for p in parts if p]
    if not head and dec.strategy in ("count", "aggregate") and res.answer_parts and \
            res.answer_parts[0] in body:
        head = res.answer_parts[0]  # the exact count leads
        body.remove(head)
    # code's headline, the model's words, a budget stop, then how code read the question,
    # then code's notes
    lead = [p for p in (head, res.model_answer, stop) if p]
    rep.answer = "\n\n".join(p for p in [*lead, rep.read_as, *body] if p)
    return rep


def log_span(sources: list) -> dict | None:
    """The log's first and last time for the timeline's axis (rlm.corpus.lanes.span_record)."""
    if not sources:
        return None
    return span_record(sources[0] if len(sources) == 1 else LogSet(sources))
