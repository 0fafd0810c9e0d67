"""The pipeline's code-only hooks: what a run does when no model reads, or a wording call fails.

Each function takes a strategy's result (rlm.pipeline.strategies.base.Result: corpus, q, decision and
its own cov, findings, groups, answer_parts, estimate, reasons) so that the strategies need one
call site each:

- answer_grep: the hits as an ordered timeline (complete: every hit was found and quoted by code).
- answer_ranked: direct/fan-out questions: BM25-ranked passages, "found by code, not read by a
  model" (incomplete: reading was needed).
- finish_coverage: the coverage statement for a run in which no model read anything.
"""

from __future__ import annotations

from rlm.pipeline.codeonly.rank import rank_passages
from rlm.pipeline.codeonly.timeline import grep_timeline
from rlm.pipeline.codeonly.wording import wording_failed_note
from rlm.render.safetext import code
from rlm.corpus.lines import number_lines
from rlm.corpus.timewindow import parse_window
from rlm.pipeline.strategies.base import Context, Result
from rlm.pipeline.strategies.base import code_finding as _finding
from rlm.schemas.report import Coverage, Estimate, Finding, Source

TOP_PASSAGES = 5
PASSAGE_CHARS = 240


def grep_items(hits) -> list[tuple[str, int, str]]:
    """(source, [lines]) pairs -> (path, line, text) in file order."""
    return [(src.display, ln, src.line(ln, max_chars=400)) for src, lines in hits for ln in lines]


def answer_grep(run, hits) -> None:
    """Code-only grep: findings are the hits; the answer is code's timeline."""
    run.estimate = Estimate(calls=0, prompt_tokens=0)
    run.cov.chunks_total = 0
    add_hit_findings(run, hits)
    run.answer_parts.extend(grep_timeline(grep_items(hits), run.decision.anchors))


def grep_regions_read(res, hits, anchors: list[str]) -> None:
    """After a fan-out over the matching regions: every hit was found and is shown by code
    (the timeline), so a region the model failed to read is optional wording lost, declared in
    one line, and never makes the run incomplete."""
    failed = res.cov.chunks_failed
    if failed:
        res.cov.declared.append(wording_failed_note(len(failed), res.cov.chunks_total,
                                                    failed[0].reason, "matching region"))
        res.cov.chunks_failed = []
    res.answer_parts.extend(grep_timeline(grep_items(hits), anchors, in_findings=False))


def add_hit_findings(run, hits, chunk: str | None = None) -> None:

    n = len(run.findings)
    for src, lines in hits:
        for ln in lines:
            n += 1
            run.findings.append(_finding(f"f{n}", f"matches {', '.join(run.decision.anchors)}",
                                         src, ln, ln, True, chunk))


def answer_ranked(run) -> None:
    """Code-only direct/fan-out: rank passages with BM25 and show them, unread by any model."""
    sources = run.corpus.sources
    passages, terms = rank_passages(sources, run.q, k=TOP_PASSAGES)
    run.estimate = Estimate(calls=0, prompt_tokens=0)
    run.cov.bytes_scanned_by_code = sum(s.size for s in sources)
    run.cov.lines_scanned_by_code = sum(s.line_count for s in sources)
    run.reasons.append(
        f"no model: code ranked {run.cov.lines_scanned_by_code:,} lines in passages of 8 lines "
        f"with BM25 for the terms {', '.join(terms) or '(none)'}")
    if not passages:
        run.answer_parts.append(
            "Code found no passage with the question's terms "
            f"({', '.join(terms) or 'the question has no searchable terms'}). "
            "Answering this question needs a model to read the text.")
        return
    run.answer_parts.append(
        f"This question needs reading. The {len(passages)} passages below were found by code "
        f"(BM25 ranking for: {', '.join(terms)}), not read by a model; they may or may not "
        "answer it.")
    for i, p in enumerate(passages, 1):
        texts = p.source.lines(p.line_start, p.line_end, max_chars=PASSAGE_CHARS)
        while texts and not texts[-1].strip():
            texts.pop()
        end = p.line_start + max(0, len(texts) - 1)
        run.findings.append(Finding(
            id=f"p{i}", claim=f"passage ranked {i} by code (BM25 {p.score}; terms: "
                              f"{', '.join(p.terms)}), not read by a model",
            evidence="\n".join(texts)[:4000],
            source=Source(path=p.path, line_start=p.line_start, line_end=end),
            verified=True, label="found by code"))


def passages_markdown(findings: list[Finding]) -> list[str]:
    out = [f"### Passages found by code, not read by a model ({len(findings)})"]
    for f in findings:
        s = f.source
        numbered = number_lines(f.evidence.split("\n"), s.line_start, max_chars=None)[0]
        body = "\n".join("    " + ln for ln in numbered.split("\n"))  # a Markdown code block
        out.append(f"**{f.id}** {code(f'{s.path}:{s.line_start}-{s.line_end}')} — {f.claim}"
                   f"\n\n{body}")
    return out


def finish_coverage(cov: Coverage, strategy: str, interrupted_by: str = "Ctrl-C") -> Coverage:
    """Statement for a run in which no model read anything. Grep and profile are complete from
    code; direct and fan-out needed reading, so they are not (a gap in the one ledger)."""
    from rlm.engine import ledger

    needs_reading = strategy in ("direct", "fanout", "aggregate")
    verb = {"profile": "profiled", "grep": "searched", "count": "counted"}.get(strategy, "ranked")
    s = (f"Coverage: {cov.lines_scanned_by_code:,} lines ({ledger.mb(cov.bytes_scanned_by_code)}) "
         f"were {verb} by code; no model read any of the text (no model configured)")
    if needs_reading:
        s += "; the passages shown were found by code, not read by a model"
        cov.gaps.append("this question needs a model to read the text")
    return ledger.close(cov, [s + "."], interrupted_by=interrupted_by)


def ranked_by_code(ctx: Context) -> Result:
    """No model: a question that needs reading gets BM25-ranked passages, found by code and
    not read (incomplete), instead of a direct read or a fan-out nobody would do."""
    res = ctx.new_result()
    if not ctx.opts.dry_run:
        answer_ranked(res)
    return res
