"""The audit's report: module map, findings (verified first, then the rejected claims), rounds
and their stop reason (the audit's own field), file coverage and the coverage statement."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from rlm.repo.audit.lenses import tested_by
from rlm.repo.audit.state import AuditState
from rlm.verify.evidence import parse_evidence_path
from rlm.models.none import NOTICE as NO_MODEL_NOTICE
from rlm.repo.corpus import files_statement
from rlm.repo.rounds import Rounds, StopReason
from rlm.engine import ledger
from rlm.schemas.report import Coverage, GateInfo, Source, UsageInfo
from rlm.schemas.repo_report import (
    AuditFinding,
    AuditInfo,
    AuditReport,
    FileCoverage,
    LinkCounts,
    ModuleInfo,
)
from rlm.schemas.report import EvidenceCounts

if TYPE_CHECKING:
    from rlm.repo.audit.run import _Audit


def module_infos(st: AuditState) -> list[ModuleInfo]:
    tb = tested_by(st.corpus, st.modules)
    counts: dict[str, int] = {}
    for f in st.findings.items:
        counts[f.module] = counts.get(f.module, 0) + 1
    out = []
    for m in st.modules:
        text = "\n".join("\n".join(st.corpus.lines(f.path)) for f in m.files)
        apis: list[str] = []
        for a in dict.fromkeys(st.apis.get(m.name, [])):  # only names code finds in the module
            name = a.split("(")[0].strip().split(".")[-1]
            if name and name not in apis and re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", text):
                apis.append(name)
        ps = st.purpose.get(m.name, [])
        purpose = ps[0][:300] + (f" (+{len(ps) - 1} more part(s))" if len(ps) > 1 else "") if ps else ""
        out.append(ModuleInfo(name=m.name, files=len(m.files), lines=m.lines, bytes=m.size,
                              purpose=purpose, key_apis=apis[:10], tested_by=tb.get(m.name, []),
                              chunks=st.chunks_of.get(m.name, 0), findings=counts.get(m.name, 0)))
    return out


def file_coverage(st: AuditState) -> FileCoverage:
    c = st.corpus
    read = {f.path for f in c.files if f.path in st.map_paths
            and st.read.covers(f.path, len(c.lines(f.path)))}
    failed = set() if st.opts.dry_run else {
        p.path for fp in st.failed_map.values() for p in fp.job.chunk.parts} - read
    return c.file_coverage(read, failed)


def coverage(st: AuditState, fcov: FileCoverage, rounds: Rounds, interrupted: bool) -> Coverage:
    c = st.corpus
    cov = Coverage(chunks_total=st.chunks_total, chunks_ok=st.chunks_ok,
                   chunks_failed=st.failed_entries(), bytes_total=c.walk.total_bytes,
                   lines_total=c.walk.total_lines, skipped=fcov.skipped_files,
                   declared=list(st.declared))
    cov.lines_read_by_model = st.read.total_lines()
    cov.bytes_read_by_model = st.read.total_bytes(c)
    cov.bytes_scanned_by_code = c.walk.total_bytes  # every kept file is scanned for candidates
    cov.lines_scanned_by_code = c.walk.total_lines
    code_only = rounds.stopped is StopReason.NO_MODEL
    if not st.opts.dry_run and not code_only:
        if fcov.scanned_by_code:  # an audit reads every file; mine needs only what it scoped
            cov.gaps.append(f"{fcov.scanned_by_code} file(s) were only scanned by code, never "
                            "read by the model")
        if rounds.stopped is StopReason.BUDGET:
            cov.gaps.append(f"the rounds stopped early ({rounds.reason})")
    cov.interrupted = interrupted
    if code_only:  # nothing was to be read by a model: code's scan is the whole audit
        cov.declared.insert(0, NO_MODEL_NOTICE)
        body = [files_statement(fcov), f"No model read anything; code scanned all "
                f"{c.walk.total_lines:,} lines of the kept files for its facts."]
        return ledger.close(cov, body, what="the audit")
    body = [files_statement(fcov),
            f"The model read {cov.lines_read_by_model:,} of {c.walk.total_lines:,} lines in "
            f"{st.chunks_ok} of {st.chunks_total} calls; code scanned every kept file for "
            "candidate lines."]
    if st.other_failed:
        body.append(f"{len({x.chunk for x in st.other_failed})} of the failed calls were digging "
                    "calls: their files had been read in the module map.")
    return ledger.close(cov, body, what="the audit", dry_run=st.opts.dry_run)


def rejected_findings(st: AuditState) -> list[AuditFinding]:
    out = []
    for i, r in enumerate(st.findings.rejected, 1):
        try:
            p, a, b = parse_evidence_path(r.cited)
        except ValueError:
            p, a, b = r.cited[:200], 0, 0
        out.append(AuditFinding(
            id=f"x{i}", claim=r.claim or "(no claim)", evidence="",
            source=Source(path=p, line_start=a, line_end=b), verified=False, label=r.kind,
            group=r.module, note=r.reason, kind=r.kind if r.kind != "doc" else "fact",
            module=r.module, severity=r.severity, lens=r.lens, round=r.round,
            evidence_path=r.cited[:200], quote=r.quote[:200], status="rejected"))
    return out


def gate_reasons(run: _Audit, fcov: FileCoverage) -> list[str]:
    st, c = run.st, run.st.corpus
    reasons = [
        f"repository: {fcov.total} files listed by the walker ({c.walk.method}), "
        f"{len(c.files)} kept, grouped by folder into {len(st.modules)} module(s)",
        f"round 1: one isolated call per module or module part ({len(run.first_jobs)} "
        f"call(s) of at most {st.max_chars:,} characters; big files cut on function "
        "or class boundaries)",
        f"later rounds dig where the map is thin; lenses: {', '.join(run.opts.lenses)}",
    ]
    if st.brief:
        reasons.append("weak model (the embedded one): round 1 asks only what each module is "
                       "for; in the lens rounds the lines code's rules select are the "
                       "findings (code quotes them) and the model only phrases their claims")
    return reasons


def _declare_drops(st: AuditState) -> None:
    if st.dropped_purposes:
        st.declared.append(f"{st.dropped_purposes} module purpose(s) written by the model "
                           "were dropped as degenerate (one word repeated)")
    if st.findings.dropped_picks:
        st.declared.append(f"{st.findings.dropped_picks} line(s) picked by the weak model were "
                           "dropped: their claims did not mention the picked line")


def build_report(run: _Audit, rounds: Rounds, run_id: str, question: str) -> AuditReport:
    st = run.st
    _declare_drops(st)
    fcov = file_coverage(st)
    cov = coverage(st, fcov, rounds, run.budget.interrupted)
    fs, stats = st.findings, st.findings.stats
    info = AuditInfo(lenses=list(run.opts.lenses), modules=module_infos(st), rounds=rounds.rounds,
                     stopped=rounds.stopped.value, stop_reason=rounds.reason,
                     evidence=EvidenceCounts(**stats.as_dict()), links=LinkCounts(**st.links))
    n = {k: sum(f.kind == k and f.verified for f in fs.items) for k in ("fact", "risk", "doc")}
    lk = info.links
    by_code = sum(f.chunk == "code" for f in fs.items)
    u = run.budget.usage
    return AuditReport(
        command="audit", question=question, corpus=st.corpus.corpus_info(),
        strategy="code_only" if run.code_only else "fanout",
        gate=GateInfo(reasons=gate_reasons(run, fcov), estimate=run.estimate),
        answer=((f"{NO_MODEL_NOTICE}. " if rounds.stopped is StopReason.NO_MODEL else "")
                + f"{n['fact']} verified fact(s), {n['risk']} verified risk(s) and {n['doc']} "
                f"documentation claim(s) in {len(st.modules)} module(s) after "
                f"{len(rounds.rounds)} round(s) ({by_code} found by code); stopped: {info.stopped} ({info.stop_reason}). "
                f"Evidence: {stats.verified} verified, {stats.corrected} corrected, "
                f"{stats.rejected} rejected. Test links: {lk.verified} verified, {lk.inferred} "
                f"inferred (not resolved), {lk.rejected} rejected (a builtin or an outside "
                "name, not the package's)."),
        findings=fs.items + rejected_findings(st), coverage=cov, audit=info, files=fcov,
        evidence=info.evidence,
        usage=UsageInfo(calls=u.calls, prompt_tokens=u.prompt_tokens,
                        completion_tokens=u.completion_tokens, cached_calls=u.cached_calls),
        model=getattr(run.model, "name", ""), run_id=run_id, dry_run=run.opts.dry_run,
        views=st.views)
