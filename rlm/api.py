"""Library entry points. `ask()` runs: probe -> gate -> strategy -> (synthesis) -> report.

A Session (rlm.run.session) holds the models, call cache, budget, Ctrl-C and run record; the
gate (rlm.strategies.gate) makes the final decision; a strategy module (rlm.strategies.direct,
grep, profile, fanout) returns its plan and outcomes; rlm.report turns them into the Report.
The CLI only renders what this returns.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import anyio

from rlm import answer_check
from rlm import interrupt as scanctl
from rlm import report as report_mod
from rlm import strategies
from rlm.corpus.open import Corpus, focus_logs, open_corpus, unread_corpus
from rlm.errors import UsageError
from rlm.models.base import Model
from rlm.models.profile import is_code_only
from rlm.query import Query, read_query
from rlm.run.events import Gate
from rlm.run.options import RunOptions
from rlm.run.session import Session
from rlm.run.window import chars_per_token, size_window
from rlm.schemas import Report
from rlm.strategies import gate, synthesis
from rlm.strategies.base import Context, scan_interrupted


@dataclass
class AskOptions(RunOptions):
    strategy: str | None = None  # force direct | grep | profile | fanout


async def ask_async(path: str, question: str, opts: AskOptions, model: Model | None = None,
                    on_event: Callable[[str, dict], None] | None = None,
                    handle_sigint: bool = False, interrupt: anyio.Event | None = None) -> Report:
    """`interrupt`: when set, the run stops like on Ctrl-C and reports what finished."""
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
            strategies.route(ctx)  # a counting question: count (code) or aggregate (records)
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


def ask(path: str, question: str, opts: AskOptions | None = None, **kw) -> Report:
    """Synchronous convenience wrapper around ask_async."""
    return anyio.run(lambda: ask_async(path, question, opts or AskOptions(), **kw))


# ------------------------------------------------------------------------------------ repos

def audit(repo: str, opts=None, **kw):
    """`rlm audit` as a library call (see rlm.audit)."""
    from rlm.audit import audit as _audit

    return _audit(repo, opts, **kw)


def mine(repo: str, questions: list[str], opts=None, **kw):
    """`rlm mine` as a library call (see rlm.mine)."""
    from rlm.mine import mine as _mine

    return _mine(repo, questions, opts, **kw)
