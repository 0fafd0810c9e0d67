"""An audit's or a mining question's summary (`--summary`): ask's guarded reduce and synthesis
(rlm.engine.reducer, rlm.engine.synth) over the VERIFIED findings only, worded by the repository
recipe's own [merge] and [synth] prompts.

Code's findings stay the result: the summary is an extra paragraph. A failed, refused or cut
summary is said in the coverage statement and never removes or changes a finding. Every number
and identifier the summary states must be in the findings it was given (code checks; otherwise
the summary is withheld and the reason said), and its cites are mapped back to evidence paths by
code.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rlm.engine.budget import Budget
from rlm.engine.reducer import numbers_and_ids, reduce_findings, render
from rlm.engine.synth import fit_count, synthesize
from rlm.verify.evidence import format_evidence_path, parse_evidence_path
from rlm.models.base import Model
from rlm.models.profile import is_code_only
from rlm.engine.window import size_window
from rlm.schemas.report import Finding, ReduceInfo, Source
from rlm.schemas.repo_report import Fact, QuestionResult


@dataclass
class Summary:
    text: str | None = None  # None: no summary (why says it)
    cites: list[str] = field(default_factory=list)  # evidence paths of the findings it used
    reduce: ReduceInfo | None = None
    notes: list[str] = field(default_factory=list)  # for the coverage statement


def source_of(evidence_path: str) -> Source:
    """An evidence path (rlm.verify.evidence's form) as a Source."""
    path, a, b = parse_evidence_path(evidence_path)
    return Source(path=path, line_start=a, line_end=b)


def fact_findings(facts: list[Fact]) -> list[Finding]:
    """Mining's verified facts in the engine's Finding shape (claim, code's quote, source)."""
    return [Finding(id=f"fact{i}", claim=f.claim, evidence=f.quote,
                    source=source_of(f.evidence_path), verified=True)
            for i, f in enumerate(facts, 1)]


def _path(f: Finding) -> str:
    return format_evidence_path(f.source.path, f.source.line_start, f.source.line_end)


async def summarize(model: Model, question: str, findings: list[Finding], *, recipe_name: str,
                    budget: Budget, window_tokens: int, timeout: float) -> Summary:
    out = Summary()
    verified = [f for f in findings if f.verified]
    if not verified:
        out.notes.append("summary: no verified finding to summarise")
        return out
    room = window_tokens  # material tokens of one call (rlm.engine.window.size_window)

    def size(fs: list[Finding]) -> int:
        return model.count_tokens(render(fs))

    merged, info = await reduce_findings(
        model, [f.model_copy() for f in verified], question, recipe_name=recipe_name,
        fits=lambda fs: fit_count(model, fs, room) == len(fs), size=size, budget=budget,
        timeout=timeout)
    out.reduce = info
    if info.rounds:
        out.notes.append(f"summary: {len(verified)} verified findings merged to {len(merged)} "
                         f"in {info.rounds} round(s) (stopped: {info.stopped})")
    syn = await synthesize(model, question, merged, budget, room, timeout,
                           recipe_name=recipe_name)
    if syn.cut_note:
        out.notes.append(f"summary: {syn.cut_note}")
    if syn.error or not syn.text:
        out.notes.append(f"summary: the call failed ({syn.error or 'empty answer'}); the "
                         "findings stand as code checked them")
        return out
    shown = " ".join(f"{f.claim} {f.evidence} {_path(f)}" for f in merged[:syn.used]).lower()
    invented = sorted(t for t in numbers_and_ids(syn.text) if t.lower() not in shown)
    if invented:
        out.notes.append(f"summary withheld: it stated {', '.join(invented[:5])}, which no "
                         "verified finding holds")
        return out
    out.text = syn.text
    out.cites = list(dict.fromkeys(_path(merged[c - 1]) for c in (syn.cites or [])))
    return out


AUDIT_QUESTION = ("What does this repository do, and what are its most important facts and "
                  "risks?")


def _skip_reason(model: Model, opts, budget: Budget) -> str | None:
    if opts.dry_run:
        return "summary: not written (dry run)"
    if is_code_only(model):
        return "summary: not written (--summary needs a model; none is configured)"
    if budget.interrupted:
        return "summary: not written (the run was interrupted)"
    return None


async def summarize_audit(model: Model, findings: list[Finding], opts, budget: Budget,
                          ) -> Summary:
    """The audit's summary paragraph from its verified findings (repo-audit's prompts)."""
    why = _skip_reason(model, opts, budget)
    if why:
        return Summary(notes=[why])
    win = size_window([model], opts.usable_fraction).tokens
    return await summarize(model, AUDIT_QUESTION, findings, recipe_name="repo-audit",
                           budget=budget, window_tokens=win, timeout=opts.timeout)


async def summarize_questions(model: Model, results: list[QuestionResult], opts,
                              budget: Budget) -> list[str]:
    """Each mining question's summary from its verified facts (requirements-mining's
    prompts); returns the notes for the coverage statement."""
    why = _skip_reason(model, opts, budget)
    if why:
        return [why]
    win = size_window([model], opts.usable_fraction).tokens
    notes: list[str] = []
    for i, r in enumerate(results, 1):
        if not r.verified:
            continue
        s = await summarize(model, r.question, fact_findings(r.verified),
                            recipe_name="requirements-mining", budget=budget,
                            window_tokens=win, timeout=opts.timeout)
        r.summary, r.summary_cites = s.text, s.cites
        notes.extend(f"Q{i} {n}" for n in s.notes)
    return notes
