"""Markdown of a report: the answer, then the findings as code checked them (groups, passages,
verified and not verified), the reduce and the coverage statement. The report's own `answer`
is only the answer (the model's words and code's notes); everything else is rendered here."""

from __future__ import annotations

from rlm.engine.ledger import mb as size_text
from rlm.render.safetext import code, visible
from rlm.schemas.report import Finding, Report
from rlm.words import n_


def _ref(f: Finding) -> str:
    """path:lines as a code span, the path's control and bidi characters shown as escapes."""
    s = f.source
    return code(f"{s.path}:{s.line_start}" + (f"-{s.line_end}" if s.line_end != s.line_start
                                              else ""))


def _evidence(f: Finding, width: int = 220) -> str:
    ev = f.evidence.replace("`", "'").split("\n")[0]
    return ev if len(ev) <= width else ev[:width] + "…"


def answer_markdown(rep: Report, banner: bool = False) -> str:
    """The answer with its findings, reduce and coverage statement (what a reader needs).
    `banner`: the "no model" notice is already at the top of the report, so it is said once."""
    text = rep.answer
    if banner:
        from rlm.models.none import NOTICE

        text = "\n\n".join(p for p in text.split("\n\n") if p.strip() != NOTICE)
    out: list[str] = [text] if text else []
    verified = [f for f in rep.findings if f.verified]
    unverified = [f for f in rep.findings if not f.verified]
    if rep.groups:
        out.append(f"### Findings ({n_(len(verified), 'line')} in {n_(len(rep.groups), 'group')}, "
                   "found by code)")
        by_group: dict[str, list[Finding]] = {}
        for f in rep.findings:
            by_group.setdefault(f.group or "", []).append(f)
        for g in rep.groups:
            fs = by_group.get(g["id"], [])
            claim = fs[0].claim if fs else g["why"]
            if g["kind"] == "identifier":
                head = (f"**{g['id']} · one story: {n_(len(fs), 'line')} share `{g['key']}` "
                        f"(in file order)**")
            elif g["why"] and g["why"] in claim:  # the claim says why: not twice
                head = f"**{g['id']} · {n_(len(fs), 'line')}**"
            else:
                head = f"**{g['id']} · {n_(len(fs), 'line')}: {g['why']}**"
            label = f" [model label: {g['label']}]" if g.get("label") else ""
            if fs and fs[0].note and fs[0].note.startswith("the model labelled"):
                label = f" [label: {g['label']} ({fs[0].note})]"  # rlm.pipeline.codeonly.wording
            out.append(f"{head}{label} — {claim}")
            for i, f in enumerate(fs, 1):
                step = f"{i}. " if g["kind"] == "identifier" else "- "
                out.append(f"{step}{_ref(f)} `{_evidence(f)}`")
    elif verified and all(f.label == "found by code" for f in verified):
        from rlm.pipeline.codeonly.answers import passages_markdown

        out.extend(passages_markdown(verified))
    elif verified and "Timeline (found by code" in rep.answer:
        pass  # grep hits: code's timeline above lists them
    elif verified:
        out.append(f"### Verified findings ({len(verified)})")
        for f in verified:
            extra = f" ({f.note})" if f.note else ""
            out.append(f"- {f.claim} — {_ref(f)} `{_evidence(f)}`{extra}")
    if unverified:
        out.append(f"### Not verified ({len(unverified)}): claims whose evidence did not check out; "
                   "not facts")
        for f in unverified[:30]:
            out.append(f"- {f.claim} — cited {_ref(f)}: {f.note}")
    if rep.reduce.rounds or rep.reduce.stopped != "fits":
        out.append(f"_Reduce: {n_(rep.reduce.rounds, 'round')}, stopped: {rep.reduce.stopped}._")
    if evidence_line(rep):
        out.append(evidence_line(rep))
    out.append(f"_{visible(rep.coverage.statement)}_")
    return "\n\n".join(out)


def evidence_line(rep: Report) -> str:
    """The evidence counts, worded the same for every command ("" when nothing was cited)."""
    ev = rep.evidence
    if not (ev.verified or ev.corrected or ev.rejected):
        return ""
    return (f"Evidence checked by code: {ev.verified} verified, {ev.corrected} corrected (the "
            f"quote was a few lines from the cited range), {ev.rejected} rejected.")


def report_markdown(rep: Report) -> str:
    """The whole report as Markdown: header, gate, the answer with findings and coverage, usage."""
    c = rep.corpus
    head = [f"# {rep.command}: {rep.question}",
            f"Corpus {code(c.path)}: {size_text(c.bytes)} ({n_(c.bytes, 'byte')}), {n_(c.lines, 'line')}, "
            f"{n_(c.files, 'file')}, kind {c.kind}. "
            f"Strategy: **{rep.strategy}**.",
            "Gate: " + " ".join(f"{r.rstrip('.')}." for r in rep.gate.reasons),
            f"Estimate: {n_(rep.gate.estimate.calls, 'call')}, ~{rep.gate.estimate.prompt_tokens:,} "
            f"prompt tokens" + (f", ~{rep.gate.estimate.seconds:,.0f} s on {rep.model}"
                                + (f" (speed: {rep.gate.estimate.basis})" if rep.gate.estimate.basis else "")
                                if rep.gate.estimate.seconds is not None else "") + "."]
    if getattr(rep, "tier", None) == "none":  # issue 9: say it at the very top, in one line
        from rlm.models.none import NOTICE

        head.insert(1, f"> {NOTICE}")
    if rep.dry_run:
        return "\n\n".join(head + [rep.answer, f"_{visible(rep.coverage.statement)}_"])
    u = rep.usage
    tail = (f"Usage: {n_(u.calls, 'call')}, {u.prompt_tokens:,} prompt + {u.completion_tokens:,} "
            f"completion tokens, {u.cached_calls} cached, {u.wall_s:.1f}s. Model: {rep.model}. "
            f"Run: {rep.run_id}.")
    from rlm.engine.estimate import overrun

    over = overrun(u.wall_s, rep.gate.estimate.seconds)
    if over:
        tail += f" The run took {over}."
    if u.endpoints:
        tail += " Endpoints: " + "; ".join(
            f"{e['url']} {n_(e['calls'], 'call')}" + (f", {e['failures']} failed over" if e["failures"] else "")
            for e in u.endpoints) + "."
    ex = getattr(rep, "executor", None)
    if ex and ex.get("name") == "ray":
        shards = ", ".join(f"{n_(k, 'shard')} on {node}" for node, k in
                           ex.get("shards_per_node", {}).items())
        ran = ", ".join(f"{k} {n:,}" for k, n in ex.get("tasks", {}).items())
        tail += (f" Executor: Ray, {n_(ex['nodes'], 'node')}, {n_(ex['workers'], 'worker')}"
                 + (f" ({shards})" if shards else "") + "."
                 + (f" Ray tasks: {ran}; the gate, merges, reduce, synthesis and coverage "
                    "ran on this machine." if ran else ""))
    banner = getattr(rep, "tier", None) == "none"
    return "\n\n".join(head + ["## Answer", answer_markdown(rep, banner), tail])
