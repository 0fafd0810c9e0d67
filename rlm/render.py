"""Rendering the answer as Markdown. The structure is composed by code from verified findings;
the model contributes only its short answer text and per-group claims."""

from __future__ import annotations

from rlm.schemas import Finding, Report


def _ref(f: Finding) -> str:
    s = f.source
    return f"{s.path}:{s.line_start}" + (f"-{s.line_end}" if s.line_end != s.line_start else "")


def _evidence(f: Finding, width: int = 220) -> str:
    ev = f.evidence.replace("`", "'").split("\n")[0]
    return ev if len(ev) <= width else ev[:width] + "…"


def answer_markdown(rep: Report, model_answer: str | None, parts: list[str]) -> str:
    out: list[str] = []
    if model_answer:
        out.append(model_answer)
    out.extend(parts)
    verified = [f for f in rep.findings if f.verified]
    unverified = [f for f in rep.findings if not f.verified]
    if rep.groups:
        out.append(f"### Findings ({len(verified)} lines in {len(rep.groups)} groups, found by code)")
        by_group: dict[str, list[Finding]] = {}
        for f in rep.findings:
            by_group.setdefault(f.group or "", []).append(f)
        for g in rep.groups:
            fs = by_group.get(g["id"], [])
            if g["kind"] == "identifier":
                head = (f"**{g['id']} · one story: {len(fs)} lines share `{g['key']}` "
                        f"(in file order)**")
            else:
                head = f"**{g['id']} · {len(fs)} line(s): {g['why']}**"
            label = f" [model label: {g['label']}]" if g.get("label") else ""
            if fs and fs[0].note and fs[0].note.startswith("the model labelled"):
                label = f" [label: {g['label']} ({fs[0].note})]"  # rlm.codeonly.wording
            claim = fs[0].claim if fs else g["why"]
            out.append(f"{head}{label} — {claim}")
            for i, f in enumerate(fs, 1):
                step = f"{i}. " if g["kind"] == "identifier" else "- "
                out.append(f"{step}`{_ref(f)}` `{_evidence(f)}`")
    elif verified and all(f.label == "found by code" for f in verified):
        from rlm.codeonly.answers import passages_markdown

        out.extend(passages_markdown(verified))
    elif verified and any(p.startswith("Timeline (found by code") for p in parts):
        pass  # grep hits: code's timeline above lists them
    elif verified:
        out.append(f"### Verified findings ({len(verified)})")
        for f in verified:
            extra = f" ({f.note})" if f.note else ""
            out.append(f"- {f.claim} — `{_ref(f)}` `{_evidence(f)}`{extra}")
    if unverified:
        out.append(f"### Not verified ({len(unverified)}): claims whose evidence did not check out; "
                   "not facts")
        for f in unverified[:30]:
            out.append(f"- {f.claim} — cited {_ref(f)}: {f.note}")
    if rep.reduce.rounds or rep.reduce.stopped != "fits":
        out.append(f"_Reduce: {rep.reduce.rounds} round(s), stopped: {rep.reduce.stopped}._")
    out.append(f"_{rep.coverage.statement}_")
    return "\n\n".join(out)


def report_markdown(rep: Report) -> str:
    """The whole report as Markdown: answer, gate, usage. (The answer already ends with coverage.)"""
    c = rep.corpus
    head = [f"# {rep.command}: {rep.question}",
            f"Corpus `{c.path}`: {c.bytes:,} bytes, {c.lines:,} lines, {c.files} file(s), kind {c.kind}. "
            f"Strategy: **{rep.strategy}**.",
            "Gate: " + " ".join(f"{r.rstrip('.')}." for r in rep.gate.reasons),
            f"Estimate: {rep.gate.estimate.calls} call(s), ~{rep.gate.estimate.prompt_tokens:,} "
            f"prompt tokens" + (f", ~{rep.gate.estimate.seconds:,.0f} s on {rep.model}"
                                if rep.gate.estimate.seconds is not None else "") + "."]
    if rep.dry_run:
        return "\n\n".join(head + [rep.answer])
    u = rep.usage
    tail = (f"Usage: {u.calls} call(s), {u.prompt_tokens:,} prompt + {u.completion_tokens:,} "
            f"completion tokens, {u.cached_calls} cached, {u.wall_s:.1f}s. Model: {rep.model}. "
            f"Run: {rep.run_id}.")
    if u.endpoints:
        tail += " Endpoints: " + "; ".join(
            f"{e['url']} {e['calls']} call(s)" + (f", {e['failures']} failed over" if e["failures"] else "")
            for e in u.endpoints) + "."
    return "\n\n".join(head + ["## Answer", rep.answer, tail])
