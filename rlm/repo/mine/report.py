"""The mine report: facts per question (verified, inferred, placeholders), file coverage and
the coverage statement."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlm.repo.mine.scope import MAX_RELEVANT_FILES
from rlm.models.none import NOTICE as NO_MODEL_NOTICE
from rlm.repo.corpus import files_statement
from rlm.repo.summary import source_of
from rlm.engine import ledger
from rlm.schemas.report import Coverage, Estimate, Finding, GateInfo, UsageInfo
from rlm.schemas.repo_report import FileCoverage, LinkCounts, MineReport
from rlm.schemas.report import EvidenceCounts

if TYPE_CHECKING:
    from rlm.repo.mine.run import _Mine


def coverage(run: _Mine, fcov: FileCoverage) -> Coverage:
    c = run.c
    cov = Coverage(chunks_total=len(run.jobs), chunks_ok=run.chunks_ok, chunks_failed=run.failed,
                   bytes_total=c.walk.total_bytes, lines_total=c.walk.total_lines,
                   skipped=fcov.skipped_files, bytes_scanned_by_code=c.walk.total_bytes,
                   lines_scanned_by_code=c.walk.total_lines)
    cov.lines_read_by_model = run.read.total_lines()
    cov.bytes_read_by_model = run.read.total_bytes(c)
    cov.interrupted = run.budget.interrupted
    cov.declared.extend(run.summary_notes)
    if run.code_only:
        cov.declared.insert(0, NO_MODEL_NOTICE)
        for i, r in enumerate(run.results, 1):
            if not r.verified:  # reading was needed and nothing read: as ask's code-only
                cov.gaps.append(f"Q{i} needs a model to read its {len(r.relevant_files)} "
                                "ranked file(s)")
        body = [files_statement(fcov), f"No model read anything; code scanned all "
                f"{c.walk.total_lines:,} lines of the kept files."]
        return ledger.close(cov, body, what="answers", dry_run=run.opts.dry_run)
    body = [files_statement(fcov),
             f"Code searched all {c.walk.total_lines:,} lines of the kept files; the model read "
             f"{cov.lines_read_by_model:,} candidate lines in {run.chunks_ok} of "
             f"{len(run.jobs)} call(s)."]
    cuts = [s for s in run.scopes if s.cut_files]
    if cuts:
        cov.declared.append(f"{len(cuts)} question(s) matched more than {MAX_RELEVANT_FILES} "
                            "files; the lowest-ranked were only scanned by code")
    return ledger.close(cov, body, what="answers", dry_run=run.opts.dry_run)


def findings(run: _Mine) -> list[Finding]:
    out: list[Finding] = []
    for qi, r in enumerate(run.results, 1):
        for f in r.verified + r.inferred:
            out.append(Finding(
                id=f"f{len(out) + 1}", claim=f.claim, evidence=f.quote,
                source=source_of(f.evidence_path),
                verified=f.confidence == "verified", chunk=f"q{qi}", label=f.basis,
                group=f"q{qi}", note=f.note or None))
    return out


def build_report(run: _Mine, estimate: Estimate, run_id: str) -> MineReport:
    c = run.c
    for r in run.results:
        if not r.verified:
            r.placeholder = f"[fact: {r.question}]"
    read = set(run.ok_paths)
    fcov = c.file_coverage(read, run.failed_paths - read)
    cov = coverage(run, fcov)
    u = run.budget.usage
    reasons = [f"repository: {fcov.total} files listed by the walker ({c.walk.method}), "
               f"{len(c.files)} kept; code scoped each question by keyword search and shared "
               "identifiers"]
    reasons += [f"Q{i}: {r.scope}" for i, r in enumerate(run.results, 1)]
    nv = sum(len(r.verified) for r in run.results)
    ni = sum(len(r.inferred) for r in run.results)
    npl = sum(1 for r in run.results if r.placeholder)
    return MineReport(
        command="mine", question=" | ".join(run.qs), corpus=c.corpus_info(), strategy="scoped",
        gate=GateInfo(reasons=reasons, estimate=estimate),
        answer=((f"{NO_MODEL_NOTICE}. " if run.code_only else "")
                + f"{len(run.qs)} question(s): {nv} verified fact(s), {ni} inferred, "
                f"{npl} placeholder(s). Evidence: {run.stats.verified} verified, "
                f"{run.stats.corrected} corrected, {run.stats.rejected} rejected."
                + (f" Test links: {run.links['verified']} verified, {run.links['inferred']} "
                   f"inferred, {run.links['rejected']} rejected." if run.links else "")),
        findings=findings(run), coverage=cov, questions=run.results, files=fcov,
        evidence=EvidenceCounts(**run.stats.as_dict()), links=LinkCounts(**run.links),
        usage=UsageInfo(calls=u.calls, prompt_tokens=u.prompt_tokens,
                        completion_tokens=u.completion_tokens, cached_calls=u.cached_calls),
        model=getattr(run.model, "name", ""), run_id=run_id, dry_run=run.opts.dry_run)
