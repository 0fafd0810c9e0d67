"""Fan-out: every chunk is read by the model in an isolated call; each finding's citation is
checked by rlm.verify.evidence within what its chunk showed; the verified ones are reduced (guarded)
and then synthesised (rlm.pipeline.strategies.synthesis)."""

from __future__ import annotations

from typing import Callable, Iterable, Iterator

from rlm.verify import evidence
from rlm.prompts import recipe
from rlm.engine import interrupt as scanctl
from rlm.corpus.chunk import Chunk, ShownLines
from rlm.corpus.index import iter_chunks
from rlm.corpus.lines import MAX_LINE_CHARS
from rlm.corpus.timewindow import log_window, window_note
from rlm.engine.call import call_json
from rlm.engine.mapper import Outcome, map_items
from rlm.engine.reducer import reduce_findings, render
from rlm.models.base import Limits
from rlm.engine.events import Plan, ReduceNote, UnitStarted
from rlm.engine.estimate import announce
from rlm.engine import fit, longrun
from rlm.engine.ahead import Ahead
from rlm.engine.window import PROMPT_OVERHEAD_TOKENS, chunk_bytes
from rlm.schemas.report import Estimate, Finding, Source
from rlm.pipeline.codeonly.answers import ranked_by_code
from rlm.pipeline.strategies.base import RECIPE, Context, Result, done, unit_of


async def run(ctx: Context) -> Result:
    if ctx.code_only:
        return ranked_by_code(ctx)
    res = ctx.new_result()
    max_bytes = chunk_bytes(ctx.window, ctx.cpt)

    windows = {src.display: log_window(ctx.corpus.probe.kind, src, ctx.query.window) for src in ctx.corpus.sources}

    def chunks() -> Iterator[Chunk]:
        for src in ctx.corpus.sources:
            ranges, _ = windows[src.display]  # a log's time window: only its lines are read
            if ranges is None:
                yield from iter_chunks(src, max_bytes)
            elif ranges:
                yield from iter_chunks(src, max_bytes, line_ranges=ranges)

    w = next((w for _, w in windows.values() if w), None)
    res.where.window({p: r for p, (r, _) in windows.items() if r is not None})
    if w:
        res.cov.declared.append(window_note(w, {p: r for p, (r, _) in windows.items()},
                                            {s.display: s.line_count for s in ctx.corpus.sources}))
    await map_chunks(ctx, res, chunks, max_bytes)
    return res


def _plan(ctx: Context, res: Result, numbered: Callable[[], Iterable[Chunk]],
          max_bytes: int) -> int:
    """Count and estimate the chunks (a first pass that keeps none of them)."""
    total = cut = est_prompt = 0
    for c in numbered():  # the counting pass scans the corpus: Ctrl-C stops it
        scanctl.checkpoint()
        total += 1
        cut += c.cut
        est_prompt += ctx.est_tokens(c.nbytes) + PROMPT_OVERHEAD_TOKENS
    if cut:
        res.cov.declared.append(f"{cut} chunks are pieces of over-long lines cut by bytes "
                                f"(at most {max_bytes:,} bytes each)")
    res.cov.chunks_total = total
    res.estimate = Estimate(calls=total + 1, prompt_tokens=est_prompt)
    res.reasons.append(f"fan-out: {total} chunks of at most ~{ctx.window:,} tokens, "
                       f"concurrency {ctx.opts.concurrency}")
    return total


def _map_prompts(ctx: Context) -> Ahead:
    """Each chunk's map prompt, built a batch ahead (redaction scans a batch in one pass), a
    chunk too big for the window as its pieces (same id: told apart by their parts)."""
    last: dict = {}  # the last chunk's numbered text: its fit is judged, then its prompt built

    def material(c: Chunk) -> str:
        key = (c.id, c.parts)
        if key not in last:
            last.clear()
            last[key] = c.numbered_text(MAX_LINE_CHARS)
        return last[key]

    def prompt(c: Chunk) -> list[dict[str, str]]:
        return recipe.messages(RECIPE, "map", question=ctx.q, where=c.describe(),
                               material=material(c))

    def fits(c: Chunk) -> bool:
        return fit.estimate(ctx.sub, material(c)) <= ctx.window

    return Ahead(ctx.sub, prompt, key=lambda c: (c.id, c.parts), fits=fits, split=fit.split)


async def map_chunks(ctx: Context, res: Result, make_chunks: Callable[[], Iterable[Chunk]],
                     max_bytes: int) -> None:
    """Map over the chunks make_chunks() yields (twice: once to count and estimate, once to
    run), so that even 20,000 chunks are never all in memory at once; then reduce."""

    def numbered() -> Iterator[Chunk]:
        for i, c in enumerate(make_chunks(), 1):
            c.id = f"c{i:04d}"  # unique across files
            yield c

    total = _plan(ctx, res, numbered, max_bytes)
    if ctx.opts.dry_run:
        return
    longrun.check(ctx, res.estimate, res.reasons)
    ctx.emit(Plan(total, ctx.opts.concurrency))
    announce(ctx, res.estimate)  # measured-speed seconds; progress flags a 3x overrun
    t = recipe.task(RECIPE, "map")
    out_model = recipe.schema_model(RECIPE, "map")

    ahead = _map_prompts(ctx)

    async def read(c: Chunk):
        out, _ = await call_json(ctx.sub, ahead.messages(c), out_model,
                                 Limits(max_tokens=t["max_tokens"], timeout=ctx.opts.timeout),
                                 ctx.budget)
        return out

    split_ids: set[str] = set()

    async def work(c: Chunk):  # a chunk too big for the context is read in pieces
        ctx.emit(UnitStarted(c.id, c.path, c.line_start, c.line_end))
        parts = await fit.read_fitting(c, read, ahead.fits,
                                       on_split=lambda p: split_ids.add(p.id))
        return parts[0] if len(parts) == 1 else out_model.model_construct(
            findings=[f for r in parts for f in r.findings])

    verified: list[Finding] = []
    unverified: list[Finding] = []
    cap = next((m.max_length for m in out_model.model_fields["findings"].metadata
                if getattr(m, "max_length", None)), 10**9)  # the findings one call may give
    full: list[str] = []  # chunks whose answer was full: they may hold more than it says

    def finished(o: Outcome) -> None:
        c: Chunk = o.item
        fs = []
        res.withheld(c, len(o.result.findings) if o.ok else None)
        if o.ok:
            res.read(c)
            if len(o.result.findings) >= cap:
                full.append(c.id)
            for mf in o.result.findings:
                f = check_citation(res, c, mf, len(verified) + len(unverified) + 1)
                (verified if f.verified else unverified).append(f)
                fs.append(f)
        else:
            res.fail(unit_of(c), o)
        done(ctx, unit_of(c), o, fs)

    await map_items(ahead.items(numbered()), work, key=lambda c: c.id,
                    concurrency=ctx.opts.concurrency, budget=ctx.budget,
                    cancel_scope=ctx.session.scope, on_outcome=finished, keep_results=False)
    _declare_limits(res, len(split_ids), full, total, cap)
    # file order, not completion order: reduce/synthesis prompts (and the call cache) stay
    # the same from one run to the next
    for fs in (verified, unverified):
        fs.sort(key=lambda f: (int((f.chunk or "c0")[1:]), f.source.line_start))
    res.cov.chunks_failed.sort(key=lambda c: int(c.chunk[1:]))
    await _reduce(ctx, res, verified, unverified)


def _declare_limits(res: Result, split: int, full: list[str], total: int, cap: int) -> None:
    """What the map could not read as one call each, or may not have reported in full."""
    if split:
        res.cov.declared.append(f"{split} {'chunk was' if split == 1 else 'chunks were'} too big "
                                "for the model's context (by the estimate on its own text, or "
                                "by the server) and read in pieces")
    if full:  # a dense chunk loses findings past the cap: say so, never silently
        full.sort(key=lambda k: int(k[1:]))
        res.cov.declared.append(
            f"{len(full)} of {total} chunks gave the most findings one call may return ({cap}): "
            f"they may hold more relevant lines than reported ({', '.join(full[:5])}"
            f"{', …' if len(full) > 5 else ''}); ask a narrower question or use smaller chunks")


async def _reduce(ctx: Context, res: Result, verified: list[Finding],
                  unverified: list[Finding]) -> None:
    def size(fs):
        return ctx.model.count_tokens(render(fs))

    agg, info = await reduce_findings(
        None if ctx.budget.interrupted else ctx.sub, verified, ctx.q,
        fits=lambda fs: size(fs) <= ctx.window, size=size, budget=ctx.budget,
        timeout=ctx.opts.timeout, log=lambda m: ctx.emit(ReduceNote(m)))
    res.reduce = info
    res.findings = agg + unverified
    res.synthesize = True


def check_citation(res: Result, c: Chunk, mf, n: int) -> Finding:
    """Models cite, code quotes: rlm.verify.evidence checks the quote at the cited line, within what
    this call was shown (verified, corrected or rejected, counted)."""
    ev = res.evidence.add(evidence.verify_lines(ShownLines(c), c.path, mf.line, mf.line,
                                                mf.quote))
    return Finding(id=f"f{n}", claim=mf.claim, evidence=ev.text, chunk=c.id,
                   verified=ev.ok, note=ev.reason or None,
                   source=Source(path=c.path, line_start=ev.line_start or mf.line,
                                 line_end=ev.line_end or mf.line))
