"""`rlm mine REPO QUESTION...`: requirements mining with checked evidence.

Code scopes every question first (rlm.repo.mine.scope). The model only picks numbers among the
candidate lines and phrases a short claim; code maps each number to ``path:line``, takes the
quote from the file and checks it with rlm.verify.evidence. Facts are ``verified`` only when the check
passes, the line is code *and* the line supports the model's claim (rlm.verify.claim_support);
documentation, comments, imports, bare signatures or an unsupported claim make a fact
``inferred``. A question without a verified fact gets the placeholder ``[fact: <question>]``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import anyio

from rlm.corpus import instructions
from rlm.redact import model as redact_model
from rlm.engine.budget import Budget
from rlm.engine.mapper import Outcome, map_items
from rlm.errors import UsageError
from rlm.verify.evidence import EvidenceStats
from rlm.repo.mine.codefacts import MAX_API, canonical_facts, is_canonical
from rlm.repo.mine.options import MineOptions
from rlm.repo.mine.rankfiles import named_definitions, rank_files
from rlm.repo.mine.report import build_report
from rlm.repo.mine.scope import Scope, Scoper, basis_of
from rlm.models.base import Model
from rlm.models.profile import is_code_only
from rlm.repo.calls import call_task, est_tokens, window_chars
from rlm.repo.candidates import (
    Candidate,
    check_pick,
    is_weak_model,
    render_candidates,
    sane_claim,
)
from rlm.verify.claim_support import support
from rlm.repo.corpus import RepoCorpus
from rlm.repo.link_claims import LinkClaims
from rlm.engine.ledger import done_event
from rlm.repo.model_reads import ReadTracker
from rlm.repo.summary import summarize_questions
from rlm.repo.facts import repo_facts
from rlm.engine.events import Gate, Plan, to_sink
from rlm.engine.ledger import failed_parts, ranges_of
from rlm.engine.outcomes import Status
from rlm.engine.session import Session
from rlm.engine.window import PROMPT_OVERHEAD_TOKENS
from rlm.schemas.report import Estimate, FailedChunk
from rlm.schemas.repo_report import Fact, MineReport, QuestionResult

RECIPE = "requirements-mining"
CANONICAL_SCOPE = ("answered by code: each test and the package functions it calls, the public "
                   "API and the commands the README documents")


@dataclass
class AnswerJob:
    """One call for one question: numbered candidate lines of some of its relevant files."""

    id: str
    q: int
    cands: list[Candidate]
    mapping: dict
    material: str

    def shown(self) -> list[tuple[str, int, int]]:
        return ranges_of((c.path, c.line) for c in self.cands)


class _Mine:
    def __init__(self, corpus: RepoCorpus, questions: list[str], opts: MineOptions, model: Model,
                 budget: Budget, emit: Callable[[str, dict], None]):
        self.c, self.qs, self.opts, self.model, self.budget = corpus, questions, opts, model, budget
        self.emit = to_sink(emit)  # typed events to the (kind, data) sinks
        self.max_chars = window_chars(model, opts.usable_fraction, opts.chunk_chars)
        self.stats = EvidenceStats()
        self.read = ReadTracker()
        self.results = [QuestionResult(question=q) for q in questions]
        self.scopes: list[Scope] = []
        self.jobs: list[AnswerJob] = []
        self.failed: list[FailedChunk] = []
        self.failed_paths: set[str] = set()
        self.ok_paths: set[str] = set()
        self.chunks_ok = 0
        self.weak = is_weak_model(model) if opts.weak_model is None else bool(opts.weak_model)
        self.dropped = 0
        self.code_only = is_code_only(model)
        self.links: dict[str, int] = {}  # test links by status, for the canonical question
        self.link_claims = LinkClaims(corpus.root)  # a model's link claims, checked by code
        self.summary_notes: list[str] = []  # --summary's cuts and failures, and what the
        # prompt guard withheld: notes for the statement

    def plan(self) -> Estimate:
        scoper = Scoper(self.c)
        rf = repo_facts(self.c.root) if any(map(is_canonical, self.qs)) else None
        canon, unresolved = canonical_facts(self.c, self.stats, rf) if rf else ([], [])
        self.links = rf.link_counts() if rf else {}
        for qi, q in enumerate(self.qs):
            if is_canonical(q):  # code's facts first; a model's picks only add to them
                self.results[qi].verified.extend(canon)
                self.results[qi].inferred.extend(unresolved)
            if self.code_only:
                self.scopes.append(Scope(q, []))
                self.ranked_only(self.results[qi])
                if is_canonical(q):
                    n_api = sum(f.claim.startswith("public API") for f in canon)
                    self.results[qi].scope = CANONICAL_SCOPE + (
                        f" (the public API stops at its first {n_api} definitions)"
                        if n_api >= MAX_API else "")
                continue
            sc = scoper.scope(q, self.opts.one_call_max_files, self.max_chars)
            self.scopes.append(sc)
            r = self.results[qi]
            r.keywords = [k.word for k in sc.keywords]
            r.relevant_files, r.candidate_lines = sc.files, len(sc.cands)
            r.fanout, r.strategy, r.calls = sc.fanout, sc.strategy, len(sc.groups)
            r.scope = "; ".join(x for x in (sc.why, sc.note) if x)
            for g in sc.groups:
                text, mapping = render_candidates(g)
                self.jobs.append(AnswerJob(f"q{qi + 1}-{len(self.jobs) + 1:04d}", qi, g, mapping,
                                           text))
        return Estimate(calls=len(self.jobs), prompt_tokens=sum(
            est_tokens(len(j.material)) + PROMPT_OVERHEAD_TOKENS for j in self.jobs))

    def ranked_only(self, r: QuestionResult) -> None:
        """No model: a free question gets the files code ranks for it (BM25 over names,
        identifiers and docstrings) and, unless code answered it, a placeholder."""
        r.relevant_files, r.keywords = rank_files(self.c, r.question)
        r.definitions = named_definitions(self.c, r.relevant_files, r.keywords)
        r.strategy = "code_only"
        r.scope = ("no model: code ranked the files by BM25 over names, identifiers and "
                   "docstrings" + (f"; best: {', '.join(r.relevant_files[:5])}"
                                   if r.relevant_files else "; no file matched"))

    async def run(self, scope) -> None:
        self.emit(Plan(len(self.jobs), self.opts.concurrency))

        async def work(job: AnswerJob):
            sc = self.scopes[job.q]
            return await call_task(self.model, RECIPE, "answer", self.budget, self.opts.timeout,
                                   question=sc.question, why=sc.why, material=job.material)

        def done(o: Outcome) -> None:
            if o.status is Status.OK:
                self.answered(o.item, o.result)
            else:
                self.failed_job(o.item, o.status, o.error)
            self.emit(done_event(o.item, o, self.budget))

        await map_items(self.jobs, work, key=lambda j: j.id, concurrency=self.opts.concurrency,
                        budget=self.budget, on_outcome=done, cancel_scope=scope)

    def failed_job(self, job: AnswerJob, status: Status, reason: str) -> None:
        self.results[job.q].failed.append(f"{job.id}: {reason}")
        self.failed_paths.update(c.path for c in job.cands)
        self.failed.extend(failed_parts(job.id, job.shown(), status, reason))

    def answered(self, job: AnswerJob, res) -> None:
        self.chunks_ok += 1
        r = self.results[job.q]
        for c in job.cands:
            self.read.add(c.path, c.line, c.line)
            self.ok_paths.add(c.path)
        for pk in res.picks:
            fact = self.checked_fact(job, pk, r)
            if fact is not None:
                keep_fact(r, fact)

    def checked_fact(self, job: AnswerJob, pk, r: QuestionResult) -> Fact | None:
        """Models cite, code quotes: the picked line checked, its basis decided by code."""
        cand, ev = check_pick(self.c, job.mapping, pk.n, getattr(pk, "quote", ""))
        self.stats.add(ev)
        if cand is None or not ev.ok:
            r.rejected.append({"claim": pk.claim, "cited": ev.evidence_path if cand else
                               f"[{pk.n}]", "reason": ev.reason})
            return None
        if ev.evidence_path in {f.evidence_path for f in r.verified}:
            return None
        if self.weak and not sane_claim(pk.claim, cand.text):
            self.dropped += 1  # a weak model's claim that is not about its line
            r.rejected.append({"claim": pk.claim[:120], "cited": ev.evidence_path,
                               "reason": "the claim does not mention the picked line "
                               "(weak model): dropped"})
            return None
        basis = basis_of(self.c, ev.path, ev.line_start)
        quote = "\n".join(self.c.lines(ev.path)[ev.line_start - 1:ev.line_end]).strip()
        note = {"docs": "rests on documentation or comments, not on code",
                "names": "rests on a name (an import or a signature), not on what the code does"
                }.get(basis, ev.reason)
        sup = support(pk.claim, quote, self.c)
        if basis == "code" and not sup.ok:  # the line is real; the model's claim is not on it
            note = sup.reason()
        # a claim that a test exercises a definition: code's own resolution decides
        link_why = self.link_claims.check(pk.claim, ev.path, ev.line_start) if sup.ok else None
        note = link_why or note
        return Fact(claim=pk.claim.strip() or "(no claim given)", evidence_path=ev.evidence_path,
                    quote=quote[:300], note=note, basis=basis,
                    confidence="verified" if basis == "code" and sup.ok and not link_why
                    else "inferred")


def keep_fact(r: QuestionResult, fact: Fact) -> None:
    """One fact per cited line; a verified claim replaces an inferred one on the same line (the
    order in which concurrent calls finish must not decide what is verified)."""
    if fact.evidence_path in {f.evidence_path for f in r.verified}:
        return
    same = [f for f in r.inferred if f.evidence_path == fact.evidence_path]
    if fact.confidence == "verified":
        r.inferred[:] = [f for f in r.inferred if f.evidence_path != fact.evidence_path]
        r.verified.append(fact)
    elif not same:
        r.inferred.append(fact)


async def mine_async(repo: str, questions: list[str], opts: MineOptions | None = None,
                     model: Model | None = None,
                     on_event: Callable[[str, dict], None] | None = None,
                     handle_sigint: bool = False,
                     interrupt: anyio.Event | None = None) -> MineReport:
    """Mining inside one Session (models, call cache, redaction, budget, Ctrl-C, run record)."""
    qs = [q.strip() for q in questions if q and q.strip()]
    if not qs:
        raise UsageError("give at least one question")
    opts = replace(opts or MineOptions(), questions=qs)  # recorded: `rlm resume` asks them again
    opened: list[RepoCorpus] = []

    async def walk_repo() -> None:  # after the preflight, before the run record
        opened.append(RepoCorpus(repo))

    with instructions.recording() as withheld:  # the prompt guard's places, for the statement
        async with Session.open(opts, path=repo, question=" | ".join(qs), model=model,
                                on_event=on_event, handle_sigint=handle_sigint, interrupt=interrupt,
                                prepare=walk_repo) as s:
            run = _Mine(opened[0], qs, opts, s.sub, s.budget, s.sink)
            s.emit(Gate("scoped", [f"code scopes each of {len(qs)} question(s) by keyword search "
                                   "and shared identifiers; then one call or a fan-out each"]))
            estimate = run.plan()
            if not opts.dry_run:
                await run.run(s.scope)
            if opts.summary:
                run.summary_notes = await summarize_questions(s.model, run.results, opts, s.budget)
            if note := instructions.withheld_note(withheld):
                run.summary_notes.append(note)
            rep = build_report(run, estimate, s.run_id)
            redact_model.declare_in_statement(s.redaction, rep)
            return s.finish(rep)


def mine(repo: str, questions: list[str], opts: MineOptions | None = None, **kw) -> MineReport:
    """Synchronous wrapper around :func:`mine_async`."""
    return anyio.run(lambda: mine_async(repo, questions, opts, **kw))
