"""The analyzers' findings in the audit's findings: ruff's security and correctness findings of
medium or high severity, outside test files, each checked at its line by rlm.verify.evidence like every
code fact. The rest (low severity, test files, dead code, complexity) stay in the report's
``views``, counted and listed there."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlm.verify import evidence
from rlm.repo.audit.codefacts import CHUNK, module_of
from rlm.codeview.shapes import AnalyzerFinding, CodeViews
from rlm.verify.evidence import format_evidence_path
from rlm.repo.files import is_test_file
from rlm.schemas.report import Source
from rlm.schemas.repo_report import AuditFinding

if TYPE_CHECKING:
    from rlm.repo.audit.state import AuditState

SHOWN = ("high", "medium")


def promoted(f: AnalyzerFinding) -> bool:
    return (f.tool == "ruff" and f.severity in SHOWN and not is_test_file(f.path)
            and f.kind in ("security", "correctness"))


def add_analyzer_findings(st: AuditState, views: CodeViews) -> int:
    n = 0
    for f in views.analyzers.findings:
        if not promoted(f) or f.path not in st.corpus.by_path:
            continue
        lines = st.corpus.lines(f.path)
        first = lines[f.line - 1].strip() if 0 < f.line <= len(lines) else ""
        ev = evidence.check(st.corpus.root, format_evidence_path(f.path, f.line, f.line), first)
        st.findings.stats.add(ev)
        if not ev.ok:
            continue
        module = module_of(st, f.path)
        st.findings.items.append(AuditFinding(
            id=f"f{len(st.findings.items) + 1}", claim=f"{f.rule}: {f.message}",
            evidence=ev.text, source=Source(path=ev.path, line_start=ev.line_start,
                                            line_end=ev.line_end),
            verified=True, chunk=CHUNK, label="risk", group=module,
            note=f"found by {views.analyzers.produced_by} ({f.basis})", kind="risk",
            module=module, severity=f.severity, lens="risks", round=0,
            evidence_path=ev.evidence_path, quote=first[:200], status=ev.status))
        n += 1
    return n
