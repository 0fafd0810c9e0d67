"""The mine report as Markdown (links to the cited lines, relative to ``link_base``)."""

from __future__ import annotations

from rlm.render.safetext import code, link_target, visible
from rlm.schemas.repo_report import Fact, MineReport


def _cell(text: str, width: int = 160) -> str:
    t = " ".join(text.split()).replace("|", "\\|").replace("`", "'")
    return t if len(t) <= width else t[:width] + "…"


def _link(base: str, ep: str) -> str:
    path, _, rng = ep.rpartition(":")
    a, _, b = rng.partition("-")
    target = (base.rstrip("/") + "/" if base else "") + path + f"#L{a}" + (f"-L{b}" if b else "")
    return f"[{code(ep)}]({link_target(target)})"


def _table(facts: list[Fact], base: str) -> list[str]:
    out = ["| # | Claim | Evidence | Quote (from the file) |", "|---:|---|---|---|"]
    for i, f in enumerate(facts, 1):
        out.append(f"| {i} | {_cell(f.claim, 200)} | {_link(base, f.evidence_path)} | "
                   f"`{_cell(f.quote, 120)}` |")
    return out


MAX_GROUPS, MAX_ROWS = 40, 25  # modules shown, rows per module; the JSON has every fact


def _fold(facts: list[Fact]) -> dict[str, list[tuple[str, list[Fact]]]]:
    """module -> [(row key, facts)]: the same behaviour (a definition, or a claim) pinned more
    than once becomes one row with a count."""
    groups: dict[str, dict[str, list[Fact]]] = {}
    for f in facts:
        key = f.definition or f.claim
        groups.setdefault(f.module, {}).setdefault(key, []).append(f)
    return {m: sorted(rows.items(), key=lambda kv: (-len(kv[1]), kv[0]))
            for m, rows in sorted(groups.items())}


def _row(base: str, fs: list[Fact]) -> str:
    f = fs[0]
    if f.definition:  # a behaviour pinned by tests: its definition, its tests, their count
        name = f.claim.split("`")[1] if f.claim.count("`") >= 2 else f.claim
        tests = ", ".join(f"`{x.test.rsplit('::', 1)[-1]}` ({_link(base, x.evidence_path)})"
                          for x in fs[:2])
        more = f" and {len(fs) - 2} more" if len(fs) > 2 else ""
        return (f"- `{name}` ({_link(base, f.definition)}) — pinned by {len(fs)} test(s): "
                f"{tests}{more}")
    count = f" (×{len(fs)})" if len(fs) > 1 else ""
    return f"- {_cell(f.claim, 200)}{count} — {_link(base, f.evidence_path)}"


def _grouped(facts: list[Fact], base: str, inferred: bool = False) -> list[str]:
    out: list[str] = []
    folded = _fold(facts)
    for m, rows in list(folded.items())[:MAX_GROUPS]:
        lines = [f"### `{m}`"] if not inferred else []
        for key, fs in rows[:MAX_ROWS]:
            if inferred:
                f = fs[0]
                lines.append(f"- {_cell(f.claim, 160)} — {len(fs)} unresolved call(s), e.g. "
                             f"`{f.test.rsplit('::', 1)[-1]}` {_link(base, f.evidence_path)}: "
                             f"{_cell(f.note, 160)}")
            else:
                lines.append(_row(base, fs))
        if len(rows) > MAX_ROWS:
            lines.append(f"- … and {len(rows) - MAX_ROWS} more row(s) (see --json)")
        out.append("\n".join(lines))
    if len(folded) > MAX_GROUPS:
        out.append(f"… and {len(folded) - MAX_GROUPS} more module(s) (see --json).")
    return out


def _verified(q, base: str) -> list[str]:
    grouped = [f for f in q.verified if f.module]
    loose = [f for f in q.verified if not f.module]
    out: list[str] = []
    if grouped:
        n_rows = sum(len(rows) for rows in _fold(grouped).values())
        out.append(f"**Verified, by module** ({len(grouped)} fact(s) folded into {n_rows} "
                   "row(s): tests -> definitions resolved by code through imports and types, "
                   "the public API, documented commands)")
        out.extend(_grouped(grouped, base))
    if loose:
        out.append("**Verified facts**")
        out.append("\n".join(_table(loose, base)))
    return out


def _inferred(q, base: str) -> list[str]:
    grouped = [f for f in q.inferred if f.module]
    loose = [f for f in q.inferred if not f.module]
    out: list[str] = []
    if grouped:
        out.append(f"**Inferred test links** ({len(grouped)}): calls named like package "
                   "definitions whose target code could not resolve; not verified")
        out.append("\n".join(_grouped(grouped, base, inferred=True)))
    if loose:
        out.append("**Inferred** (rests on names or documentation, or the line does not carry "
                   "the claim; not verified)")
        out.append("\n".join(_table(loose, base)))
    return out


def mine_markdown(rep: MineReport, link_base: str = "") -> str:
    out = [f"# Requirements: {code(rep.corpus.path)}"]
    ev = rep.evidence
    out.append(f"{len(rep.questions)} question(s); {rep.corpus.files} files kept. Model: "
               f"{rep.model or '-'}. Evidence checked by code: {ev.verified} verified, "
               f"{ev.corrected} corrected, {ev.rejected} rejected."
               + (f" Test links: {rep.links.verified} verified, {rep.links.inferred} inferred, "
                  f"{rep.links.rejected} rejected (named like a package definition, but code "
                  "showed a builtin, an outside name or the test's own helper)."
                  if any(rep.links.model_dump().values()) else ""))
    out.append("Facts are **verified** only when code found the quoted code at the cited lines; "
               "**inferred** facts rest on names or documentation, or the cited line does not carry "
               "the claim. A question without a verified fact keeps its placeholder.")
    if rep.dry_run:
        out.append(f"**Dry run**: no model call was made. Estimate: {rep.gate.estimate.calls} "
                   f"call(s), ~{rep.gate.estimate.prompt_tokens:,} prompt tokens.")
    for i, q in enumerate(rep.questions, 1):
        out.append(f"## {i}. {q.question}")
        out.append(f"_Scope (code): {q.scope}._")
        if q.definitions:
            out.append("Definitions the question names, in the ranked files (found by code, "
                       "not read): " + ", ".join(_cell(d, 120) for d in q.definitions) + ".")
        if q.summary:
            out.append("**Summary** (from the verified facts only; numbers and names checked by "
                       "code): " + q.summary + (" — rests on " + ", ".join(
                           f"`{c}`" for c in q.summary_cites[:8]) if q.summary_cites else ""))
        if q.verified:
            out.extend(_verified(q, link_base))
        else:
            out.append(f"`{q.placeholder or f'[fact: {q.question}]'}` — no verified fact"
                       + (" (dry run)" if rep.dry_run else "") + ".")
        out.extend(_inferred(q, link_base))
        if q.rejected:
            out.append(f"Rejected ({len(q.rejected)}): " + "; ".join(
                f"{_cell(x['claim'], 80)} — {x['cited']}: {_cell(x['reason'], 120)}"
                for x in q.rejected[:6]) + ".")
        if q.failed:
            out.append("Failed calls: " + "; ".join(q.failed[:5]) + ".")
    out.append("## Coverage")
    fc = rep.files
    if fc.skipped_files:
        out.append("Skipped: " + "; ".join(f"{code(x['path'])} ({x['reason']})"
                                           for x in fc.skipped_files[:25])
                   + (f"; and {len(fc.skipped_files) - 25} more" if len(fc.skipped_files) > 25 else "")
                   + ".")
    out.append(f"_{visible(rep.coverage.statement)}_")
    u = rep.usage
    if not rep.dry_run:
        out.append(f"Usage: {u.calls} call(s), {u.prompt_tokens:,} prompt + {u.completion_tokens:,} "
                   f"completion tokens, {u.wall_s:.1f}s. Run: {rep.run_id}.")
    return "\n\n".join(out) + "\n"
