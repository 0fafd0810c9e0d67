"""What every strategy gets (:class:`Context`) and returns (:class:`Result`), and the few steps
they share: one call through the mapper, the ledger entries of a chunk, code-found findings."""

from __future__ import annotations

from dataclasses import dataclass, field

from rlm.verify import evidence
from rlm.prompts import recipe
from rlm.engine import interrupt as scanctl
from rlm.corpus.chunk import Chunk
from rlm.corpus.lines import MAX_LINE_CHARS
from rlm.corpus.open import Corpus
from rlm.corpus.source import TextSource
from rlm.engine.call import call_json
from rlm.verify.echo import echo_reason
from rlm.engine.mapper import Outcome, map_items
from rlm.models.base import Limits
from rlm.models.profile import is_code_only
from rlm.engine.events import UnitDone
from rlm.engine import covmap
from rlm.engine.ledger import Ledger, Unit, failed_unit, mb
from rlm.engine.session import Session
from rlm.schemas.report import Estimate, Finding, ReduceInfo, Source
from rlm.pipeline.gate import Decision
from rlm.pipeline.query import Query, read_query

RECIPE = "giant-file"


@dataclass
class Context:
    """A strategy's inputs: the session (models, budget, events), the corpus, the question, the
    gate's final decision and the window of one call."""

    session: Session
    corpus: Corpus
    q: str
    decision: Decision
    window: int  # material tokens one call may carry
    cpt: float  # chars per token, measured on the corpus
    result: "Result | None" = None  # the strategy's result as it fills (for an interrupted scan)
    query: Query | None = None  # the question read once (rlm.pipeline.query); read here when not given

    def __post_init__(self) -> None:
        if self.query is None:
            self.query = read_query(self.q)

    @property
    def opts(self):
        return self.session.opts

    @property
    def model(self):
        return self.session.model

    @property
    def sub(self):
        return self.session.sub

    @property
    def budget(self):
        return self.session.budget

    @property
    def code_only(self) -> bool:
        return is_code_only(self.session.model)

    def emit(self, ev) -> None:
        self.session.emit(ev)

    def est_tokens(self, nbytes: int) -> int:
        return int(nbytes / self.cpt) + 1

    def new_result(self) -> "Result":
        pr = self.corpus.probe
        led = Ledger(bytes_total=pr.bytes, lines_total=pr.lines, skipped=self.corpus.skipped,
                     declared=list(pr.notes))
        self.result = Result(ctx=self, cov=led.cov)
        return self.result


@dataclass
class Result:
    """A strategy's plan (estimate, reasons found while planning), outcomes (coverage ledger,
    findings, groups, evidence counts) and answer parts (the model's answer, code's notes)."""

    ctx: Context = field(repr=False)
    cov: object  # rlm.schemas.report.Coverage, through rlm.engine.ledger
    estimate: Estimate = field(default_factory=lambda: Estimate(calls=0, prompt_tokens=0))
    reasons: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    groups: list[dict] = field(default_factory=list)
    event_kinds: list[dict] = field(default_factory=list)  # profile: ranked kinds (corpus.anomalies)
    timeline: dict | None = None  # profile: where each kind's lines fall (rlm.corpus.lanes)
    answer_parts: list[str] = field(default_factory=list)
    model_answer: str | None = None
    shown: str = ""  # the text a direct or grep answer was read from (rlm.verify.answer_check)
    reduce: ReduceInfo | None = None
    synthesize: bool = False  # the findings still need a synthesis call
    evidence: evidence.EvidenceStats = field(default_factory=evidence.EvidenceStats)
    matched: dict | None = None  # a counting answer's record (rlm.pipeline.codeonly.count_text)
    headline: str | None = None  # code's first sentence, when the strategy wrote one
    where: covmap.Recorder = field(default_factory=covmap.Recorder)  # the coverage map's places

    # what the code-only hooks (rlm.pipeline.codeonly.answers) read
    @property
    def corpus(self) -> Corpus:
        return self.ctx.corpus

    @property
    def q(self) -> str:
        return self.ctx.q

    @property
    def decision(self) -> Decision:
        return self.ctx.decision

    # the ledger entries of one chunk
    def read(self, c: Chunk) -> None:
        cut_tail = c.cut and c.byte_start > c.source.offsets[c.line_start - 1]
        self.cov.chunks_ok += 1
        self.cov.lines_read_by_model += 0 if cut_tail else c.lines  # parts: a time window
        self.cov.bytes_read_by_model += c.nbytes
        for p in c.parts:
            self.where.read(p.path, p.start, p.end)

    def fail(self, unit: Unit, o: Outcome) -> None:
        self.cov.chunks_failed.append(failed_unit(unit, o.status, o.reason))

    def withheld(self, c: Chunk, found: int | None) -> None:
        """Name the chunk's lines that were withheld from the model as instructions (skipped,
        by design: not a gap), and the chunk as possibly suppressed when its reader then found
        nothing (`found`: findings of an answered call; None when it failed)."""
        lines = c.withheld()
        for path, ln, why in lines:
            self.cov.skipped.append({"path": f"{path}:{ln}", "incomplete": False,
                                     "reason": f"reads like an instruction to a model ({why}): "
                                               "withheld from the model"})
        if lines and found == 0:  # a gap: the reader may have obeyed text it saw around the
            # withheld lines, so "nothing there" is not sure (exit 3)
            where = ", ".join(f"{p}:{ln}" for p, ln, _ in lines[:5])
            self.cov.gaps.append(
                f"possibly suppressed: chunk {c.id} ({c.describe()}) held text that reads like "
                f"an instruction to a model ({where}), withheld from it, and its reader found "
                "nothing there")


def unit_of(c: Chunk) -> Unit:
    piece = c.parts[0].piece if len(c.parts) == 1 else None
    return Unit(c.id, c.path, c.line_start, c.line_end, piece)


def done(ctx: Context, unit: Unit, o: Outcome, findings: list | None = None) -> None:
    """The typed event for one finished unit (progress, run record)."""
    ctx.emit(UnitDone.of(unit, o.status, o.reason, ctx.budget.usage, findings))


def code_finding(fid: str, claim: str, src: TextSource, a: int, b: int, verified: bool,
                 chunk: str | None = None, **kw) -> Finding:
    """A finding whose lines code chose (a grep hit, a profiled line, a cited line): the
    evidence is the file's text at those lines."""
    text = "\n".join(src.lines(a, b, max_chars=MAX_LINE_CHARS))
    return Finding(id=fid, claim=claim, evidence=text[:4000],
                   source=Source(path=src.display, line_start=a, line_end=b),
                   verified=verified, chunk=chunk, **kw)


def finding_at(fid: str, claim: str, path: str, line: int, text: str, **kw) -> Finding:
    """A finding at one line whose text code read from the file (an event kind's example)."""
    return Finding(id=fid, claim=claim, evidence=text[:4000],
                   source=Source(path=path, line_start=line, line_end=line), verified=True, **kw)


def scan_interrupted(ctx: Context, res: "Result") -> "Result":
    """Ctrl-C during the code scan: report how far code got; nothing else was read."""
    ctl = scanctl.current()
    what = ctl.what if ctl else "scan"
    done_b, total = (ctl.done, ctl.total) if ctl else (0, ctx.corpus.probe.bytes)
    ctx.budget.interrupted = True
    res.synthesize = False
    res.cov.bytes_scanned_by_code = done_b
    of = f" of {mb(total)}" if total else ""
    res.cov.declared.append(f"the {what} stopped after {mb(done_b)}{of}" if done_b else
                            f"the {what} stopped before it finished")
    res.answer_parts.append("Interrupted by Ctrl-C while code was scanning the corpus: no "
                            "answer yet. Run the command again to finish it.")
    return res


async def one_call(ctx: Context, task: str, chunk: Chunk, **fields: str) -> Outcome:
    """One call of the main model over one unit (direct read, grep hits), through the mapper
    so a failure becomes an outcome with its status and reason, like any fan-out chunk."""
    t = recipe.task(RECIPE, task)
    msgs = recipe.messages(RECIPE, task, question=ctx.q, **fields)

    async def work(_c: Chunk):
        res, _ = await call_json(ctx.model, msgs, recipe.schema_model(RECIPE, task),
                                 Limits(max_tokens=t["max_tokens"], timeout=ctx.opts.timeout),
                                 ctx.budget, check=lambda r: echo_reason(
                                     r.answer, msgs, fields.get("material", ""), ctx.q))
        return res

    [o] = await map_items([chunk], work, key=lambda c: c.id, concurrency=1,
                          budget=ctx.budget, cancel_scope=ctx.session.scope)
    return o
