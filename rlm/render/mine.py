"""The mine report as Markdown (links to the cited lines, relative to ``link_base``)."""

from __future__ import annotations

from rlm.schemas.repo_report import Fact, MineReport


def _cell(text: str, width: int = 160) -> str:
    t = " ".join(text.split()).replace("|", "\\|").replace("`", "'")
    return t if len(t) <= width else t[:width] + "…"


def _link(base: str, ep: str) -> str:
    path, _, rng = ep.rpartition(":")
    a, _, b = rng.partition("-")
    target = (base.rstrip("/") + "/" if base else "") + path + f"#L{a}" + (f"-L{b}" if b else "")
    return f"[`{ep}`]({target.replace(' ', '%20')})"


def _table(facts: list[Fact], base: str) -> list[str]:
    out = ["| # | Claim | Evidence | Quote (from the file) |", "|---:|---|---|---|"]
    for i, f in enumerate(facts, 1):
        out.append(f"| {i} | {_cell(f.claim, 200)} | {_link(base, f.evidence_path)} | "
                   f"`{_cell(f.quote, 120)}` |")
    return out


def mine_markdown(rep: MineReport, link_base: str = "") -> str:
    out = [f"# Requirements: `{rep.corpus.path}`"]
    ev = rep.evidence
    out.append(f"{len(rep.questions)} question(s); {rep.corpus.files} files kept. Model: "
               f"{rep.model or '-'}. Evidence checked by code: {ev.verified} verified, "
               f"{ev.corrected} corrected, {ev.rejected} rejected.")
    out.append("Facts are **verified** only when code found the quoted code at the cited lines; "
               "**inferred** facts rest on names or documentation, or the cited line does not carry "
               "the claim. A question without a verified fact keeps its placeholder.")
    if rep.dry_run:
        out.append(f"**Dry run**: no model call was made. Estimate: {rep.gate.estimate.calls} "
                   f"call(s), ~{rep.gate.estimate.prompt_tokens:,} prompt tokens.")
    for i, q in enumerate(rep.questions, 1):
        out.append(f"## {i}. {q.question}")
        out.append(f"_Scope (code): {q.scope}._")
        if q.summary:
            out.append("**Summary** (from the verified facts only; numbers and names checked by "
                       "code): " + q.summary + (" — rests on " + ", ".join(
                           f"`{c}`" for c in q.summary_cites[:8]) if q.summary_cites else ""))
        if q.verified:
            out.append("**Verified facts**")
            out.extend(["\n".join(_table(q.verified, link_base))])
        else:
            out.append(f"`{q.placeholder or f'[fact: {q.question}]'}` — no verified fact"
                       + (" (dry run)" if rep.dry_run else "") + ".")
        if q.inferred:
            out.append("**Inferred** (rests on names or documentation, or the line does not carry "
                       "the claim; not verified)")
            out.extend(["\n".join(_table(q.inferred, link_base))])
        if q.rejected:
            out.append(f"Rejected ({len(q.rejected)}): " + "; ".join(
                f"{_cell(x['claim'], 80)} — {x['cited']}: {_cell(x['reason'], 120)}"
                for x in q.rejected[:6]) + ".")
        if q.failed:
            out.append("Failed calls: " + "; ".join(q.failed[:5]) + ".")
    out.append("## Coverage")
    fc = rep.files
    if fc.skipped_files:
        out.append("Skipped: " + "; ".join(f"`{x['path']}` ({x['reason']})"
                                           for x in fc.skipped_files[:25])
                   + (f"; and {len(fc.skipped_files) - 25} more" if len(fc.skipped_files) > 25 else "")
                   + ".")
    out.append(f"_{rep.coverage.statement}_")
    u = rep.usage
    if not rep.dry_run:
        out.append(f"Usage: {u.calls} call(s), {u.prompt_tokens:,} prompt + {u.completion_tokens:,} "
                   f"completion tokens, {u.wall_s:.1f}s. Run: {rep.run_id}.")
    return "\n\n".join(out) + "\n"
