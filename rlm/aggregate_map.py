"""The map step of exact aggregation (rlm/aggregate.py): chunks -> typed records, checked by code.

Hooked into the ask pipeline for counting questions ("how many", "most common", "what
fraction"...) that would otherwise be read by direct or fan-out calls, or whose quoted anchors
are nowhere in the text (a category a reader must infer, such as OOLONG's labels).
"""

from __future__ import annotations

from typing import Iterator

from rlm import recipe
from rlm.aggregate import MAX_RECORDS, Counted, RecordsResult, Tally, answer, check, item_shape, \
    norm_label, wants
from rlm.corpus.grep import search
from rlm.corpus.index import Chunk, iter_chunks
from rlm.engine.call import call_json
from rlm.engine.mapper import Outcome, map_items
from rlm.models.base import Limits
from rlm.schemas import Estimate, Finding, Source

LINES_PER_CHUNK = MAX_RECORDS - 10  # room under the schema's bound: a full chunk still fits


def applies(run) -> bool:
    """Counting question, not forced elsewhere, on a path where a model would read the text."""
    dec = run.decision
    if dec.forced or not wants(run.q):
        return False
    if dec.strategy in ("direct", "fanout"):
        return True
    if dec.strategy == "grep":  # quoted labels that are not in the text: infer, then count
        return not any(search(src, dec.anchors).hit_lines for src in run.corpus.sources)
    return False


def _chunks(run, max_bytes: int) -> Iterator[Chunk]:
    n = 0
    for src in run.corpus.sources:
        ranges = [(a, min(a + LINES_PER_CHUNK - 1, src.line_count))
                  for a in range(1, src.line_count + 1, LINES_PER_CHUNK)]
        for c in iter_chunks(src, max_bytes, line_ranges=ranges):
            n += 1
            c.id = f"c{n:04d}"
            yield c


async def run_aggregation(run, scope) -> None:
    was = run.decision.strategy
    run.decision.strategy = "fanout"
    max_bytes = max(256, int(run.window * run.cpt))
    total = sum(1 for _ in _chunks(run, max_bytes))
    run.cov.chunks_total = total
    run.estimate = Estimate(calls=total, prompt_tokens=int(run.corpus.probe.bytes / run.cpt)
                            + 450 * total)
    run.decision.reasons.append(
        f"counting question ({was} path replaced): the model turns each of {total} chunks of at "
        f"most {LINES_PER_CHUNK} lines into typed records; code checks each record against its "
        "line and computes every number (no model adds anything up)")
    if run.opts.dry_run:
        return
    t = recipe.task("aggregate", "records")
    tally = Tally()
    done_chunks: list[tuple[Chunk, bool, set[int]]] = []

    async def work(c: Chunk):
        run.emit("start", {"chunk": c.id})
        msgs = recipe.messages("aggregate", "records", question=run.q, where=c.describe(),
                               material=c.numbered_text())
        res, _ = await call_json(run.sub, msgs, RecordsResult,
                                 Limits(max_tokens=t["max_tokens"], timeout=run.opts.timeout),
                                 run.budget)
        return res

    def done(o: Outcome) -> None:
        c: Chunk = o.item
        lines_seen: set[int] = set()
        if o.ok:
            run._read(c)
            taken: set[tuple[int, str]] = set()
            for rec in o.result.records:
                if (rec.line, rec.item.strip()) in taken:  # the same record twice
                    continue
                taken.add((rec.line, rec.item.strip()))
                text = c.source.lines(rec.line, rec.line)[0] if c.line_start <= rec.line <= c.line_end else ""
                why = check(rec, text, c.line_start, c.line_end)
                if why:
                    tally.rejected.append(f"{c.id}: {why}")
                    continue
                lines_seen.add(rec.line)
                tally.records.append(Counted(rec.item.strip(), rec.line, norm_label(rec.label),
                                             rec.value, c.path))
        else:
            run._fail(c, o.error)
        done_chunks.append((c, o.ok, lines_seen))
        run.emit("chunk", {"ok": o.ok, "chunk": c.id, "path": c.path, "line_start": c.line_start,
                           "line_end": c.line_end, "error": o.error, "findings": [],
                           "tokens": run.budget.usage.total_tokens, "calls": run.budget.usage.calls,
                           "cached_calls": run.budget.usage.cached_calls})

    run.emit("plan", {"total": total, "concurrency": run.opts.concurrency})
    await map_items(_chunks(run, max_bytes), work, key=lambda c: c.id,
                    concurrency=run.opts.concurrency, budget=run.budget, cancel_scope=scope,
                    on_outcome=done, keep_results=False)
    _count_unknown(tally, done_chunks)
    _publish(run, tally)


def _count_unknown(tally: Tally, done_chunks: list[tuple[Chunk, bool, set[int]]]) -> None:
    """Items code can see (by the shape of the items the model did extract) but no model
    classified: all of a failed chunk's, and those a reader skipped in a chunk that answered."""
    shape = item_shape([r.item for r in tally.records])
    for c, ok, seen in sorted(done_chunks, key=lambda x: int(x[0].id[1:])):
        lines = c.source.lines(c.line_start, c.line_end)
        if shape is None:
            present = [c.line_start + i for i, s in enumerate(lines) if s.strip()] if not ok else []
        else:
            present = [c.line_start + i for i, s in enumerate(lines) if shape.search(s)]
        missing = [ln for ln in present if ln not in seen]
        if not missing:
            continue
        tally.unknown += len(missing)
        tally.unknown_where.append(f"chunk {c.id} failed" if not ok else
                                   f"{len(missing)} item(s) in {c.id} were not extracted")


def _publish(run, tally: Tally) -> None:
    tally.records.sort(key=lambda r: (r.path, r.line))  # file order, not completion order
    text, agg = answer(run.q, tally)
    run.answer_parts.insert(0, text)
    run.aggregate = agg
    if tally.rejected:
        run.cov.declared.append(f"{len(tally.rejected)} extracted record(s) did not check out "
                                f"against their lines and were not counted (e.g. {tally.rejected[0]})")
    skipped = [w for w in tally.unknown_where if "not extracted" in w]
    if skipped:
        run.cov.declared.append("the reader skipped items code can see: " + "; ".join(skipped[:5]))
    counts = tally.counts()
    for k, lab in enumerate(sorted(counts, key=lambda x: (-counts[x], x)), 1):
        first = tally.items(lab)[0]
        src = next(s for s in run.corpus.sources if s.display == first.path)
        run.findings.append(Finding(
            id=f"f{k}", claim=f"'{lab}': {counts[lab]:,} records counted by code "
                              f"(first: {first.item})",
            evidence=src.lines(first.line, first.line)[0][:4000],
            source=Source(path=first.path, line_start=first.line, line_end=first.line),
            verified=True, label=lab, note="all counted items are in the report's aggregate"))
