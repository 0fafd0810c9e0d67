"""`rlm audit REPO`: the audit's rounds on the shared pieces (round loop, calls, run record).

Round 1 is the module map: one isolated call per module (or module part) with the module schema
(purpose, key APIs, facts, risks; each with ``evidence_path`` ``path:start-end`` and a quote).
Later rounds dig where the map is thin (rlm.repo.audit.planner). Every job is a type with its own
handling (rlm.repo.audit.jobs); the loop (rlm.repo.rounds) stops after two consecutive rounds that add
nothing new, when nothing is left to dig, at ``max_rounds`` or when the budget is spent. The run
lives in one rlm.engine.session.Session like ask's: recorded, resumable, --sub-model for the jobs.
"""

from __future__ import annotations

from typing import Callable

import anyio

from rlm.corpus import instructions
from rlm.redact import model as redact_model
from rlm.repo.audit import planner
from rlm.repo.audit.analyzed import add_analyzer_findings
from rlm.repo.audit.codefacts import add_code_facts, public_apis
from rlm.repo.audit.jobs import Job
from rlm.repo.audit.options import AuditOptions
from rlm.repo.audit.report import build_report
from rlm.repo.audit.state import AuditState
from rlm.codeview.build import build_views, sources_of
from rlm.engine.budget import Budget
from rlm.engine.mapper import Outcome, map_items
from rlm.models.base import Model
from rlm.models.none import NOTICE as NO_MODEL_NOTICE
from rlm.models.profile import is_code_only
from rlm.repo.calls import call_task, window_chars
from rlm.repo.candidates import is_weak_model
from rlm.repo.corpus import RepoCorpus
from rlm.engine.ledger import done_event
from rlm.repo.rounds import Rounds, StopReason, run_rounds
from rlm.repo.facts import repo_facts
from rlm.repo.summary import summarize_audit
from rlm.engine.events import Gate, Plan, to_sink
from rlm.engine.outcomes import Status
from rlm.engine.session import Session
from rlm.schemas.report import Estimate
from rlm.schemas.repo_report import AuditReport, RoundInfo

RECIPE = "repo-audit"
NOTHING_LEFT = ("nothing was left to dig: every lens ran, every rejected claim was rechecked, "
                "every module has findings or was read file by file")


class _Audit:
    def __init__(self, corpus: RepoCorpus, opts: AuditOptions, model: Model, budget: Budget,
                 emit: Callable[[str, dict], None]):
        self.opts, self.model, self.budget = opts, model, budget
        self.emit = to_sink(emit)  # typed events to the (kind, data) sinks
        brief = is_weak_model(model) if opts.weak_model is None else bool(opts.weak_model)
        self.st = AuditState(corpus, opts, window_chars(model, opts.usable_fraction,
                                                        opts.chunk_chars), brief)
        self.code_only = is_code_only(model)
        self.first_jobs = planner.round1(self.st)
        self.estimate = self._estimate()

    def _estimate(self) -> Estimate:
        """Round 1 plus one pass of every lens (ids from a throwaway counter)."""
        n = iter(range(10**9))
        lens_calls = sum(len(planner.lens_jobs(self.st, lens, lambda p: f"{p}{next(n)}"))
                         for lens in self.opts.lenses)
        return Estimate(calls=len(self.first_jobs) + lens_calls,
                        prompt_tokens=sum(j.est_prompt_tokens() for j in self.first_jobs)
                        + lens_calls * 900)

    def plan(self, rnd: int) -> tuple[list[Job], list[str]]:
        if rnd == 1:
            return self.first_jobs, [f"module map: {len(self.first_jobs)} call(s) over "
                                     f"{len(self.st.modules)} module(s)"]
        return planner.plan(self.st, rnd)

    async def run_round(self, rnd: int, jobs: list[Job], scope) -> RoundInfo:
        info = RoundInfo(round=rnd)
        before = len(self.st.findings.items)
        self.emit(Plan(len(jobs), self.opts.concurrency))

        async def work(j: Job):
            return await call_task(self.model, RECIPE, j.task, self.budget, self.opts.timeout,
                                   **j.fields)

        def done(o: Outcome) -> None:
            j: Job = o.item
            self.st.chunks_total += 1
            if o.status is Status.OK:
                self.st.chunks_ok += 1
                j.on_ok(self.st, o.result, rnd)
            else:
                info.failed += 1
                info.not_run += not o.status.ran_and_failed  # the budget or Ctrl-C stopped it
                j.on_failed(self.st, o.status, o.error, rnd)
            self.emit(done_event(j, o, self.budget))

        await map_items(jobs, work, key=lambda j: j.id, concurrency=self.opts.concurrency,
                        budget=self.budget, on_outcome=done, cancel_scope=scope)
        info.new = len(self.st.findings.items) - before
        return info

    def code_round(self) -> None:
        """Code's facts and the analyzers' findings; ruff's security rules (bandit's) replace
        rlm's own risk rules when ruff ran."""
        st = self.st
        facts = repo_facts(st.corpus.root)
        files = [f.path for f in st.corpus.files]
        st.sources = sources_of(st.corpus.root, files)  # one parse, shared with public_apis
        st.views = build_views(st.corpus.root, files, facts, st.sources)
        ruff_ran = st.views.analyzers.status == "ok"
        add_code_facts(st, facts, skip=frozenset({"risk"}) if ruff_ran else frozenset())
        add_analyzer_findings(st, st.views)
        for t in st.views.tools:
            if t.status != "ran":
                st.declared.append(f"{t.name} {t.status}: {t.detail}")

    async def execute(self, scope) -> Rounds:
        if self.opts.dry_run:
            return Rounds(stopped=StopReason.DRY_RUN, reason="dry run: no model call was made")
        self.code_round()  # round 0, always first: a model round only adds to them
        public_apis(self.st)
        if self.code_only:
            return Rounds(stopped=StopReason.NO_MODEL, reason=NO_MODEL_NOTICE)
        return await run_rounds(self.plan, lambda rnd, jobs: self.run_round(rnd, jobs, scope),
                                self.budget, self.opts.max_rounds, nothing_left=NOTHING_LEFT)


async def audit_async(repo: str, opts: AuditOptions | None = None, model: Model | None = None,
                      on_event: Callable[[str, dict], None] | None = None,
                      handle_sigint: bool = False,
                      interrupt: anyio.Event | None = None) -> AuditReport:
    """The audit inside one Session (models, call cache, redaction, budget, Ctrl-C, run record);
    `interrupt`: when set, the run stops like on Ctrl-C and reports what finished."""
    opts = opts or AuditOptions()
    question = f"repository audit ({', '.join(opts.lenses)})"
    opened: list[RepoCorpus] = []

    async def walk_repo() -> None:  # after the preflight, before the run record
        opened.append(RepoCorpus(repo))

    with instructions.recording() as withheld:  # the prompt guard's places, for the statement
        async with Session.open(opts, path=repo, question=question, model=model, on_event=on_event,
                                handle_sigint=handle_sigint, interrupt=interrupt,
                                prepare=walk_repo) as s:
            run = _Audit(opened[0], opts, s.sub, s.budget, s.sink)
            s.emit(Gate("code_only", ["no model: code scans every kept file for facts"])
                   if run.code_only else
                   Gate("fanout", [f"module map: {len(run.first_jobs)} call(s) over "
                                   f"{len(run.st.modules)} module(s), then rounds until two find "
                                   "nothing new"]))  # the strategy, as ask's gate event says its
            rounds = await run.execute(s.scope)
            summ = (await summarize_audit(s.model, run.st.findings.items, opts, s.budget)
                    if opts.summary else None)
            if summ:
                run.st.declared.extend(summ.notes)
            if note := instructions.withheld_note(withheld):
                run.st.declared.append(note)
            rep = build_report(run, rounds, s.run_id, question)
            if summ:
                rep.summary, rep.summary_cites, rep.reduce = summ.text, summ.cites, summ.reduce
            redact_model.declare_in_statement(s.redaction, rep)
            return s.finish(rep)


def audit(repo: str, opts: AuditOptions | None = None, **kw) -> AuditReport:
    """Synchronous wrapper around :func:`audit_async`."""
    return anyio.run(lambda: audit_async(repo, opts, **kw))
