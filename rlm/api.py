"""Library entry points. `ask()` runs: probe -> gate -> strategy -> (synthesis) -> report.

A Session (rlm.engine.session) holds the models, call cache, budget, Ctrl-C and run record; the
gate (rlm.pipeline.gate) makes the final decision; a strategy module (rlm.pipeline.strategies.direct,
grep, profile, fanout) returns its plan and outcomes; rlm.pipeline.report turns them into the Report.
The CLI only renders what this returns.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import anyio

from rlm.verify import answer_check
from rlm.engine import interrupt as scanctl
from rlm.pipeline import report as report_mod
from rlm.pipeline import strategies
from rlm.corpus.open import Corpus, focus_logs, open_corpus, unread_corpus
from rlm.errors import UsageError
from rlm.models.base import Model
from rlm.models.profile import is_code_only
from rlm.engine.events import Gate
from rlm.engine.options import RunOptions
from rlm.engine.session import Session
from rlm.engine.window import chars_per_token, size_window
from rlm.schemas.report import Report
from rlm.schemas.repo_report import AuditReport, MineReport
from rlm.pipeline import gate
from rlm.pipeline.strategies import synthesis
from rlm.pipeline.query import Query, read_query
from rlm.pipeline.strategies.base import Context, scan_interrupted

if TYPE_CHECKING:  # imported when called: the repository recipes load only for audit and mine
    from rlm.repo.audit.options import AuditOptions
    from rlm.repo.mine.options import MineOptions


@dataclass
class AskOptions(RunOptions):
    """Options of :func:`ask`: the shared run options (model, budget, redaction, resume) and
    ``strategy``, to force one way of answering instead of the gate's choice."""

    strategy: str | None = None  # force direct | grep | profile | fanout


async def ask_async(path: str, question: str, opts: AskOptions | None = None,
                    model: Model | None = None,
                    on_event: Callable[[str, dict], None] | None = None,
                    handle_sigint: bool = False, interrupt: anyio.Event | None = None) -> Report:
    """Answer ``question`` about ``path`` inside an async program (see :func:`ask`).
    ``interrupt``: when set, the run stops like on Ctrl-C and reports what finished;
    ``handle_sigint``: Ctrl-C stops the run the same way (the CLI sets it)."""
    opts = opts or AskOptions()
    if not question.strip():
        raise UsageError("the question is empty")
    if path != "-" and not Path(path).exists():
        raise UsageError(f"no such file or folder: {path}")
    query = read_query(question)  # read once (a time code cannot read is a usage error)
    opened: list[Corpus] = []

    async def read_corpus() -> None:  # after the preflight, before the run record
        try:
            with scanctl.scanning("read of the corpus", 0):
                corpus = open_corpus(path)
                opened.append(focus_logs(corpus, question) if query.about_logs else corpus)
        except scanctl.ScanInterrupted:  # Ctrl-C while probing: still a report, recorded
            opened.append(unread_corpus(path))

    try:
        async with Session.open(opts, path=path, question=question, model=model,
                                on_event=on_event, handle_sigint=handle_sigint,
                                interrupt=interrupt, prepare=read_corpus) as s:
            return s.finish(await answer(s, opened[0], question, query))
    finally:
        for c in opened:
            c.close()


async def answer(s: Session, corpus: Corpus, question: str, query: Query | None = None) -> Report:
    """Gate, strategy, synthesis and report, inside an open session, on the question read
    once (`query`; read here when not given)."""
    pr = corpus.probe
    win = size_window([s.model, s.sub], s.opts.usable_fraction)
    if not corpus.sources:  # Ctrl-C stopped the probe: report that, decide nothing
        dec = gate.Decision("none", ["interrupted by Ctrl-C while reading the corpus, "
                                     "before the gate"])
        ctx = Context(s, corpus, question, dec, win.tokens, 3.0)
        return report_mod.build(ctx, scan_interrupted(ctx, ctx.new_result()))
    cpt = chars_per_token(s.model, pr.samples, pr.lines)
    query = query or read_query(question)
    try:  # the gate may count candidate anchors in the corpus: a scan that Ctrl-C stops
        with scanctl.scanning("count of candidate anchors", pr.bytes):
            dec = gate.decide(pr, question, win.tokens, int(pr.bytes / cpt) + 1,
                              getattr(s.opts, "strategy", None), n_sources=len(corpus.sources),
                              code_only=is_code_only(s.model), window_note=win.note,
                              sources=corpus.sources, query=query)
    except scanctl.ScanInterrupted:
        dec = gate.Decision("none", ["interrupted by Ctrl-C while code counted the question's "
                                     "candidate anchors, before the gate decided"])
        ctx = Context(s, corpus, question, dec, win.tokens, cpt, query=query)
        return report_mod.build(ctx, scan_interrupted(ctx, ctx.new_result()))
    ctx = Context(s, corpus, question, dec, win.tokens, cpt, query=query)
    told = False
    try:
        with scanctl.scanning(f"{dec.strategy} scan", pr.bytes):
            s.emit(Gate(dec.strategy, list(dec.reasons)))  # the name that runs, once
            told = True
            res = await strategies.run(dec.strategy, ctx)
    except scanctl.ScanInterrupted:
        if not told:
            s.emit(Gate(dec.strategy, list(dec.reasons)))
        return report_mod.build(ctx, scan_interrupted(ctx, ctx.result or ctx.new_result()))
    if res.synthesize and not s.opts.dry_run:
        await synthesis.finish(ctx, res)
    answer_check.guard(res)  # the model's numbers and ids must be in what code verified
    return report_mod.build(ctx, res)


def ask(path: str, question: str, opts: AskOptions | None = None, *, model: Model | None = None,
        on_event: Callable[[str, dict], None] | None = None,
        interrupt: anyio.Event | None = None) -> Report:
    """Answer ``question`` about ``path`` (a file, a folder, or ``-`` for stdin) and return the
    Report: the answer, its findings with checked evidence, and what was read, scanned or
    failed. ``opts`` picks the model, budget and strategy (default: no model, code answers);
    ``model`` is an already built Model (e.g. rlm.testing.ScriptedModel); ``on_event`` gets the
    run's progress events. The synchronous form of :func:`ask_async`."""
    return anyio.run(lambda: ask_async(path, question, opts or AskOptions(), model=model,
                                       on_event=on_event, interrupt=interrupt))


# ------------------------------------------------------------------------------------ repos

def audit(repo: str, opts: AuditOptions | None = None, *, model: Model | None = None,
          on_event: Callable[[str, dict], None] | None = None,
          interrupt: anyio.Event | None = None) -> AuditReport:
    """Audit the repository at ``repo``: a module map, findings with checked path:line evidence
    and ranked risks, in rounds until two find nothing new (`rlm audit`; see rlm.repo.audit)."""
    from rlm.repo.audit import audit_async

    return anyio.run(lambda: audit_async(repo, opts, model=model, on_event=on_event,
                                         interrupt=interrupt))


def mine(repo: str, questions: list[str], opts: MineOptions | None = None, *,
         model: Model | None = None, on_event: Callable[[str, dict], None] | None = None,
         interrupt: anyio.Event | None = None) -> MineReport:
    """Mine requirements from the repository at ``repo``: for each question, facts verified in
    code or marked inferred, and a placeholder for what is unanswered (`rlm mine`; see
    rlm.repo.mine)."""
    from rlm.repo.mine import mine_async

    return anyio.run(lambda: mine_async(repo, questions, opts, model=model, on_event=on_event,
                                        interrupt=interrupt))


def get_model(spec: str | None = None, base_url: str | list[str] | None = None,
              api_key: str | None = None, timeout: float = 120.0) -> Model:
    """The model ``spec`` names, as the CLI's ``--model``/``--base-url`` would build it:
    ``none``, ``local``, ``openai:NAME``, a NAME served at ``base_url``, or a plugin's
    ``NAME:...`` (entry point group ``rlm.models``). None: RLM_MODEL, then the config file."""
    from rlm.models.registry import resolve_model

    return resolve_model(spec, base_url, api_key=api_key, timeout=timeout)
