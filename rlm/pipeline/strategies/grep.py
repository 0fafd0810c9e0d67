"""Grep: code searches the anchors; the matching regions go to one call when they fit, else
fan out over the regions. Code's hits are findings whatever the model says; its wording of
them is optional (a failed answer call is declared, and code's timeline is shown)."""

from __future__ import annotations

from typing import Iterator

from rlm.pipeline.codeonly import answers as by_code
from rlm.pipeline.codeonly.timeline import grep_timeline
from rlm.pipeline.codeonly.wording import wording_failed_note
from rlm.corpus.grep import regions, search
from rlm.corpus.chunk import Chunk, Part
from rlm.corpus.index import iter_chunks
from rlm.corpus.source import TextSource
from rlm.corpus.timewindow import keep_in, log_window, window_note
from rlm.engine.estimate import announce
from rlm.engine.ledger import Unit, failed_unit
from rlm.engine.outcomes import Status
from rlm.engine.window import PROMPT_OVERHEAD_TOKENS, chunk_bytes
from rlm.schemas.report import Estimate
from rlm.pipeline.strategies import fanout
from rlm.pipeline.strategies.base import Context, Result, one_call
from rlm.words import n_

GREP_LINE_CHARS = 400  # grep hits are shown with less of each line: many hits, one call
MAX_HITS_PER_FILE = 5000


async def run(ctx: Context) -> Result:
    res = ctx.new_result()
    anchors = ctx.decision.anchors
    hits: list[tuple[TextSource, list[int]]] = []
    truncated = False
    windows: dict[str, list[tuple[int, int]]] = {}
    for src in ctx.corpus.sources:
        r = search(src, anchors)
        res.cov.bytes_scanned_by_code += src.size
        res.cov.lines_scanned_by_code += src.line_count
        for f in r.failed:  # Ray: a shard no worker could search (after its retry)
            res.cov.bytes_scanned_by_code -= f.shard.bytes
            res.cov.lines_scanned_by_code -= f.lines
            res.cov.chunks_failed.append(failed_unit(
                Unit(f.shard.id, src.display, f.line_start, f.line_end), Status.FAILED,
                f"not searched: {f.reason}; bytes {f.shard.start:,}-{f.shard.end:,}"))
        truncated |= r.truncated
        found = r.hit_lines
        ranges, w = log_window(ctx.corpus.probe.kind, src, ctx.query.window)  # "between 14:00 and 14:30"
        if w:
            found = keep_in(found, ranges)
            windows[src.display] = ranges
        if found:
            hits.append((src, found))
    if windows:
        totals = {s.display: s.line_count for s in ctx.corpus.sources if s.display in windows}
        res.cov.declared.append(window_note(w, windows, totals) + "; hits outside it are left out")
        res.where.window(windows)
    scanned = res.cov.lines_scanned_by_code
    if truncated:
        res.cov.declared.append(f"grep stopped collecting after {MAX_HITS_PER_FILE:,} matching "
                                "lines per file")
    n_hits = sum(len(h) for _, h in hits)
    why = (f"{n_(n_hits, 'line')} {'matches' if n_hits == 1 else 'match'} "
           + ", ".join(repr(a) for a in anchors))
    res.reasons.append(f"code search: {why} in {scanned:,} lines")
    if not hits:
        res.answer_parts.append(f"No line matches {', '.join(repr(a) for a in anchors)} in "
                                f"{scanned:,} lines searched by code; no model call was made.")
        return res
    if ctx.code_only:
        if not ctx.opts.dry_run:
            by_code.answer_grep(res, hits)
        return res
    ctx_lines = 0 if ctx.corpus.probe.kind == "log" else 2
    parts = [(src, a, b) for src, lines in hits for a, b in regions(lines, ctx_lines, src.line_count)]
    # the matching regions of every file as one unit (one call when it fits)
    unit = Chunk("g0001", tuple(Part(src.display, a, b) for src, a, b in parts), ctx.corpus)
    material = unit.numbered_text(GREP_LINE_CHARS)
    tokens = ctx.model.count_tokens(material)
    if tokens <= ctx.window:
        res.estimate = Estimate(calls=1, prompt_tokens=tokens + PROMPT_OVERHEAD_TOKENS)
        await _one_call(ctx, res, hits, unit, material, why)
        return res
    res.reasons.append(f"the matches (~{tokens:,} tokens) do not fit one call: "
                       "fan-out over the matching regions")
    max_bytes = chunk_bytes(ctx.window, ctx.cpt)

    def chunks() -> Iterator[Chunk]:
        for src, lines in hits:
            yield from iter_chunks(src, max_bytes,
                                   line_ranges=regions(lines, ctx_lines, src.line_count))

    await fanout.map_chunks(ctx, res, chunks, max_bytes)
    by_code.grep_regions_read(res, hits, anchors)  # code's timeline; a failed region is wording
    return res


async def _one_call(ctx: Context, res: Result, hits, unit: Chunk, material: str,
                    why: str) -> None:
    res.cov.chunks_total = 1
    if ctx.opts.dry_run:
        return
    announce(ctx, res.estimate)  # measured-speed seconds; progress flags a 3x overrun
    o = await one_call(ctx, "grep", unit, why=why, material=material)
    by_code.add_hit_findings(res, hits, unit.id)
    timeline = grep_timeline(by_code.grep_items(hits), ctx.decision.anchors)
    if not o.ok:  # the answer is optional wording over code's hits: say so, show code's
        res.cov.declared.append(wording_failed_note(1, 1, o.error or "failed", "answer call"))
        res.answer_parts.extend(timeline)
        return
    res.cov.chunks_ok = 1
    res.withheld(unit, len(o.result.cites))
    res.cov.lines_read_by_model = unit.lines
    res.cov.bytes_read_by_model = len(material.encode())
    for p in unit.parts:
        res.where.read(p.path, p.start, p.end)
    res.model_answer = o.result.answer.strip()
    res.shown = material
    shown = {ln for p in unit.parts for ln in range(p.start, p.end + 1)}
    bad = [c for c in o.result.cites if c not in shown]
    if bad:
        res.cov.declared.append(f"the model cited lines that were not shown to it "
                                f"({', '.join(map(str, bad[:5]))}); those cites were ignored")
    n = sum(len(h) for _, h in hits)
    res.answer_parts.append(f"No fan-out was needed: {n_(n, 'candidate line')} found by code "
                            f"search {'fits' if n == 1 else 'fit'} in one call.")
    res.answer_parts.extend(timeline)
