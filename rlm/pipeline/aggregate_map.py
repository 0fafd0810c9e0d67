"""The map step of exact aggregation (rlm/pipeline/aggregate.py): chunks -> typed records, checked by code.

Hooked into the ask pipeline for counting questions ("how many", "most common", "what
fraction"...) that would otherwise be read by direct or fan-out calls, or whose quoted anchors
are nowhere in the text (a category a reader must infer, such as OOLONG's labels).
"""

from __future__ import annotations

from typing import Iterator

from rlm.prompts import recipe
from rlm.pipeline.aggregate import MAX_RECORDS, Counted, RecordsResult, Tally, at_anchor, check, \
    item_shape, norm_label, value_anchor
from rlm.pipeline.aggregate_ops import answer
from rlm.corpus.index import Chunk, iter_chunks
from rlm.engine.ahead import Ahead
from rlm.engine.call import call_json
from rlm.engine.mapper import Outcome, map_items
from rlm.models.base import Limits
from rlm.engine.events import Plan, UnitStarted
from rlm.schemas.report import Estimate, Finding, Source
from rlm.pipeline.strategies.base import Context, Result, done, unit_of

LINES_PER_CHUNK = MAX_RECORDS - 10  # room under the schema's bound: a full chunk still fits
RECIPE = "aggregate"


def _chunks(ctx: Context, max_bytes: int) -> Iterator[Chunk]:
    n = 0
    for src in ctx.corpus.sources:
        ranges = [(a, min(a + LINES_PER_CHUNK - 1, src.line_count))
                  for a in range(1, src.line_count + 1, LINES_PER_CHUNK)]
        for c in iter_chunks(src, max_bytes, line_ranges=ranges):
            n += 1
            c.id = f"c{n:04d}"
            yield c


async def run(ctx: Context) -> Result:
    was = ctx.decision.replaced or ctx.decision.strategy  # the size strategy it replaced
    res = ctx.new_result()
    max_bytes = max(256, int(ctx.window * ctx.cpt))
    total = sum(1 for _ in _chunks(ctx, max_bytes))
    res.cov.chunks_total = total
    res.estimate = Estimate(calls=total, prompt_tokens=ctx.est_tokens(ctx.corpus.probe.bytes)
                            + 450 * total)
    res.reasons.append(
        f"counting question ({was} path replaced): the model turns each of {total} chunks of at "
        f"most {LINES_PER_CHUNK} lines into typed records; code checks each record against its "
        "line and computes every number (no model adds anything up)")
    if ctx.opts.dry_run:
        return res
    t = recipe.task(RECIPE, "records")
    tally = Tally()
    done_chunks: list[tuple[Chunk, bool, set[int]]] = []

    def prompt(c: Chunk) -> list[dict[str, str]]:
        return recipe.messages(RECIPE, "records", question=ctx.q, where=c.describe(),
                               material=c.numbered_text())

    ahead = Ahead(ctx.sub, prompt, key=lambda c: c.id)  # redaction scans a batch in one pass

    async def work(c: Chunk):
        ctx.emit(UnitStarted(c.id, c.path, c.line_start, c.line_end))
        out, _ = await call_json(ctx.sub, ahead.messages(c), RecordsResult,
                                 Limits(max_tokens=t["max_tokens"], timeout=ctx.opts.timeout),
                                 ctx.budget)
        return out

    def finished(o: Outcome) -> None:
        c: Chunk = o.item
        seen: set[int] = set()
        if o.ok:
            res.read(c)
            _take(c, o.result.records, tally, seen)
        else:
            res.fail(unit_of(c), o)
        done_chunks.append((c, o.ok, seen))
        done(ctx, unit_of(c), o)

    ctx.emit(Plan(total, ctx.opts.concurrency))
    await map_items(ahead.items(_chunks(ctx, max_bytes)), work, key=lambda c: c.id,
                    concurrency=ctx.opts.concurrency, budget=ctx.budget,
                    cancel_scope=ctx.session.scope, on_outcome=finished, keep_results=False)
    res.cov.chunks_failed.sort(key=lambda c: int(c.chunk[1:]))
    _check_value_field(tally, done_chunks)
    _count_unknown(tally, done_chunks)
    _publish(ctx, res, tally)
    return res


def _take(c: Chunk, records, tally: Tally, seen: set[int]) -> None:
    """Records that check out against their lines are counted; the others are named."""
    taken: set[tuple[int, str]] = set()
    for rec in records:
        if (rec.line, rec.item.strip()) in taken:  # the same record twice
            continue
        taken.add((rec.line, rec.item.strip()))
        inside = c.line_start <= rec.line <= c.line_end
        text = c.source.lines(rec.line, rec.line)[0] if inside else ""
        why = check(rec, text, c.line_start, c.line_end)
        if why:
            tally.rejected.append(f"{c.id}: {why}")
            continue
        seen.add(rec.line)
        tally.records.append(Counted(rec.item.strip(), rec.line, norm_label(rec.label),
                                     rec.value, c.path))


def _check_value_field(tally: Tally, done_chunks: list[tuple[Chunk, bool, set[int]]]) -> None:
    """Values copied from the wrong field (the user id, not the minutes) are on their line too;
    when nearly all values share the word before them, a value without it is not counted (its
    record is then unknown, so every number stays a bound that holds)."""
    where = {}  # (path, line) -> (chunk, seen)
    for c, _ok, seen in done_chunks:
        for ln in seen:
            where[(c.path, ln)] = (c, seen)
    valued = [(r, where[(r.path, r.line)][0].source.lines(r.line, r.line)[0])
              for r in tally.records if r.value is not None and (r.path, r.line) in where]
    anchor = value_anchor([(text, r.value) for r, text in valued])
    if anchor is None:
        return
    bad = {id(r) for r, text in valued if not at_anchor(text, r.value, anchor)}
    for r in [r for r in tally.records if id(r) in bad]:
        c, seen = where[(r.path, r.line)]
        seen.discard(r.line)
        tally.rejected.append(f"{c.id}: value {r.value:g} on line {r.line} is not the "
                              f"{anchor!r} field that the other values come from")
    tally.records = [r for r in tally.records if id(r) not in bad]


def _count_unknown(tally: Tally, done_chunks: list[tuple[Chunk, bool, set[int]]]) -> None:
    """Items code can see (by the shape of the items the model did extract) but no model
    classified: all of a failed chunk's, and those a reader skipped in a chunk that answered."""
    shape = item_shape([r.item for r in tally.records])
    for c, ok, seen in sorted(done_chunks, key=lambda x: int(x[0].id[1:])):
        lines = c.source.lines(c.line_start, c.line_end)
        if shape is None:  # no item shape learned: any line the reader did not extract may be one
            present = [c.line_start + i for i, s in enumerate(lines) if s.strip()]
        else:
            present = [c.line_start + i for i, s in enumerate(lines) if shape.search(s)]
        missing = [ln for ln in present if ln not in seen]
        if not missing:
            continue
        tally.unknown += len(missing)
        tally.unknown_where.append(f"chunk {c.id} failed" if not ok else
                                   f"{len(missing)} item(s) in {c.id} were not extracted "
                                   "or did not check out")


def _publish(ctx: Context, res: Result, tally: Tally) -> None:
    tally.records.sort(key=lambda r: (r.path, r.line))  # file order, not completion order
    text, agg = answer(ctx.q, tally)
    res.answer_parts.insert(0, text)
    res.aggregate = agg  # read by rlm.pipeline.report into Report.aggregate
    if tally.rejected:
        res.cov.declared.append(f"{len(tally.rejected)} extracted record(s) did not check out "
                                f"against their lines and were not counted (e.g. {tally.rejected[0]})")
    skipped = [w for w in tally.unknown_where if "not extracted" in w]
    if skipped:  # the numbers are ranges, not exact: the answer is incomplete (exit 3)
        res.cov.gaps.append("items code can see that the reader did not classify: "
                            + "; ".join(skipped[:5]))
    counts = tally.counts()
    for k, lab in enumerate(sorted(counts, key=lambda x: (-counts[x], x)), 1):
        first = tally.items(lab)[0]
        src = next(s for s in ctx.corpus.sources if s.display == first.path)
        res.findings.append(Finding(
            id=f"f{k}", claim=f"'{lab}': {counts[lab]:,} records counted by code "
                              f"(first: {first.item})",
            evidence=src.lines(first.line, first.line)[0][:4000],
            source=Source(path=first.path, line_start=first.line, line_end=first.line),
            verified=True, label=lab, note="all counted items are in the report's aggregate"))
