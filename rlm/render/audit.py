"""The audit report as Markdown (links to the cited lines, relative to ``link_base``)."""

from __future__ import annotations

from rlm.verify.evidence import format_evidence_path
from rlm.render.codeview import views_markdown
from rlm.render.safetext import code, link_target, visible
from rlm.schemas.repo_report import AuditReport

SEVERITY_RANK = {"high": 0, "medium": 1, "low": 2, None: 3}


def _link(base: str, path: str, a: int, b: int) -> str:
    ref = format_evidence_path(path, a, b)
    target = (base.rstrip("/") + "/" if base else "") + path + f"#L{a}" + (f"-L{b}" if b != a else "")
    return f"[{code(ref)}]({link_target(target)})"


def _q(text: str, width: int = 140) -> str:
    t = " ".join(text.split("\n")[0].split()).replace("`", "'").replace("|", "\\|")
    return t if len(t) <= width else t[:width] + "…"


def _cell(text: str, width: int = 160) -> str:
    t = " ".join(text.split()).replace("|", "\\|")
    return t if len(t) <= width else t[:width] + "…"


def _head(rep: AuditReport) -> list[str]:
    a = rep.audit
    out: list[str] = [f"# rlm audit: {code(rep.corpus.path)}"]
    out.append(f"{rep.corpus.files} files kept ({rep.corpus.bytes:,} bytes, {rep.corpus.lines:,} "
               f"lines) in {len(a.modules)} module(s). Lenses: {', '.join(a.lenses)}. "
               f"Model: {rep.model or '-'}.")
    if rep.dry_run:
        out.append(f"**Dry run**: no model call was made. Estimate: {rep.gate.estimate.calls} "
                   f"call(s) for round 1 and the lens passes, ~{rep.gate.estimate.prompt_tokens:,} "
                   "prompt tokens.")
    elif a.stopped == "no_model":
        out.append(f"**{a.stop_reason}.** Every finding below was found and checked by code.")
    else:
        out.append(f"**Rounds: {len(a.rounds)}; stopped: {a.stopped}** — {a.stop_reason}.")
        ev = a.evidence
        out.append(f"Evidence checked by code: {ev.verified} verified, {ev.corrected} corrected "
                   f"(the quote was a few lines from the cited range), {ev.rejected} rejected.")
    if rep.summary:
        out.append("**Summary** (written by the model from the verified findings only; its "
                   "numbers and names checked by code): " + rep.summary
                   + (" — rests on " + ", ".join(f"`{c}`" for c in rep.summary_cites[:8])
                      if rep.summary_cites else ""))
    return out


def _module_map(rep: AuditReport) -> list[str]:
    a = rep.audit
    out: list[str] = []
    out.append("## Module map")
    table = ["| Module | Files | Lines | Purpose (model) | Key APIs (found in the code) | "
             "Tests importing it | Findings |", "|---|---:|---:|---|---|---|---:|"]
    for m in a.modules:
        tests = ", ".join(f"`{t}`" for t in m.tested_by[:3]) + (
            f" +{len(m.tested_by) - 3}" if len(m.tested_by) > 3 else "")
        tests = tests or ("—" if m.name not in ("tests", "test") else "")
        table.append(f"| `{m.name}` | {m.files} | {m.lines:,} | {_cell(m.purpose) or '—'} | "
                     f"{', '.join(f'`{x}`' for x in m.key_apis) or '—'} | {tests} | {m.findings} |")
    out.append("\n".join(table))
    return out


def _findings(rep: AuditReport, link_base: str) -> list[str]:
    a = rep.audit
    out: list[str] = []
    verified = [f for f in rep.findings if f.status != "rejected" and f.verified]
    out.append("## Findings by module")
    if not verified:
        out.append("_No finding could be verified._")
    for m in a.modules:
        fs = [f for f in verified if f.module == m.name]
        if not fs:
            continue
        out.append(f"### `{m.name}`")
        block = []
        for f in sorted(fs, key=lambda f: (f.kind == "doc", f.kind, f.source.path, f.source.line_start)):
            s = f.source
            tag = {"fact": "fact", "risk": f"risk · {f.severity or 'medium'}",
                   "doc": "docs say (not checked against code)"}[f.kind]
            extra = f" _({f.note})_" if f.note and f.status == "corrected" else ""
            block.append(f"- **{tag}** {_cell(f.claim, 240)} — "
                         f"{_link(link_base, s.path, s.line_start, s.line_end)} `{_q(f.evidence)}`{extra}")
        out.append("\n".join(block))
    risks = sorted((f for f in verified if f.kind == "risk"),
                   key=lambda f: (SEVERITY_RANK.get(f.severity, 3), f.source.path, f.source.line_start))
    out.append("## Risks, ranked")
    if risks:
        block = []
        for i, f in enumerate(risks, 1):
            s = f.source
            block.append(f"{i}. **{f.severity or 'medium'}** {_cell(f.claim, 240)} — "
                         f"{_link(link_base, s.path, s.line_start, s.line_end)} `{_q(f.evidence)}`")
        out.append("\n".join(block))
    else:
        out.append("_No verified risk._")
    return out


def _inferred_links(rep: AuditReport) -> list[str]:
    """Test links code could not resolve: counted, a few shown, all in the JSON."""
    lk = rep.audit.links
    out = [f"## Test links: {lk.verified} verified, {lk.inferred} inferred, {lk.rejected} rejected",
           "A test's call is **verified** only when code resolved it through imports and types; "
           "**inferred** calls are named like package definitions but their receiver is not known "
           "(not facts); **rejected** calls were named alike but code showed a builtin, an outside "
           "name or the test's own helper runs."]
    inferred = [f for f in rep.findings if f.label == "test_inferred"]
    block = [f"- {_cell(f.claim, 200)} — `{f.evidence_path}`" for f in inferred[:12]]
    if len(inferred) > 12:
        block.append(f"- … and {len(inferred) - 12} more inferred link(s) (see the JSON report)")
    return out + (["\n".join(block)] if block else [])


def _rejected_and_rounds(rep: AuditReport) -> list[str]:
    a = rep.audit
    out: list[str] = []
    rejected = [f for f in rep.findings if f.status == "rejected"]
    if rejected:
        out.append(f"## Not verified ({len(rejected)}): claims whose evidence did not check out — "
                   "not facts")
        block = [f"- [{f.kind}] {_cell(f.claim, 160)} — cited `{_cell(f.evidence_path, 80)}`: "
                 f"{_cell(f.note or '', 200)}" for f in rejected[:40]]
        if len(rejected) > 40:
            block.append(f"- … and {len(rejected) - 40} more (see the JSON report)")
        out.append("\n".join(block))
    if a.rounds:
        out.append("## Rounds")
        table = ["| Round | Work (chosen by code) | Calls | Failed | New findings |",
                 "|---:|---|---:|---:|---:|"]
        for r in a.rounds:
            table.append(f"| {r.round} | {_cell('; '.join(r.work), 300)} | {r.calls} | {r.failed} "
                         f"| {r.new} |")
        out.append("\n".join(table))
    return out


def _coverage(rep: AuditReport) -> list[str]:
    fc = rep.files
    out: list[str] = []
    out.append("## Coverage")
    if fc.skipped_files:
        out.append("Skipped: " + "; ".join(f"{code(x['path'])} ({x['reason']})"
                                           for x in fc.skipped_files[:25])
                   + (f"; and {len(fc.skipped_files) - 25} more" if len(fc.skipped_files) > 25 else "")
                   + ".")
    if fc.failed_files:
        out.append("Failed (not read): " + ", ".join(code(p) for p in fc.failed_files[:25]) + ".")
    if fc.scanned_only:
        out.append("Only scanned by code (never read by the model): "
                   + ", ".join(code(p) for p in fc.scanned_only[:25]) + ".")
    out.append(f"_{visible(rep.coverage.statement)}_")
    u = rep.usage
    if not rep.dry_run:
        out.append(f"Usage: {u.calls} call(s), {u.prompt_tokens:,} prompt + {u.completion_tokens:,} "
                   f"completion tokens, {u.wall_s:.1f}s. Run: {rep.run_id}.")
    return out


def audit_markdown(rep: AuditReport, link_base: str = "") -> str:
    out = (_head(rep) + _module_map(rep) + _findings(rep, link_base) + views_markdown(rep.views)
           + _inferred_links(rep) + _rejected_and_rounds(rep) + _coverage(rep))
    return "\n\n".join(out) + "\n"
