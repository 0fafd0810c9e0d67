"""Guarded reduce: merge findings until they fit the synthesis window, provably terminating.

Each round first merges deterministically (same cited lines, same normalised claim), then asks
the model to group what says the same thing. The loop continues only while the aggregate
strictly shrinks (a natural-number measure, so it ends) and the budget lasts. A merged claim
must keep every number and identifier of its inputs verbatim and add none of its own, and its
evidence is taken from its inputs (never from the model); a merge that breaks a rule is refused.
"""

from __future__ import annotations

import re
from typing import Callable

from rlm.prompts import recipe
from rlm.engine.budget import Budget
from rlm.engine.call import call_json
from rlm.errors import BudgetExhausted, ModelCallError
from rlm.models.base import Limits, Model
from rlm.schemas.report import Finding, ReduceInfo

_NUMID = re.compile(r"[A-Za-z0-9_.:/-]*\d[A-Za-z0-9_.:/-]*")
BATCH = 12


def numbers_and_ids(text: str) -> set[str]:
    return {m.group(0).strip(".:,") for m in _NUMID.finditer(text)} - {""}


def _added(claim: str, inputs: list[Finding]) -> set[str]:
    """Numbers and identifiers of a merged claim that are in none of its inputs (their claims,
    evidence and cited places): a merge may reword, never invent."""
    shown = " ".join(f"{f.claim} {f.evidence} {f.source.path}:{f.source.line_start}-"
                     f"{f.source.line_end}" for f in inputs).lower()
    return {t for t in numbers_and_ids(claim) if t.lower() not in shown}


def render(findings: list[Finding]) -> str:
    return "\n".join(
        f"[{i}] {f.claim} ({f.source.path}:{f.source.line_start}-{f.source.line_end})"
        for i, f in enumerate(findings, 1))


def _norm(s: str) -> str:
    return " ".join(s.lower().split())


def dedupe(findings: list[Finding]) -> list[Finding]:
    """Exact duplicates: same cited range, or same claim. The first keeps its evidence."""
    seen: dict[tuple, Finding] = {}
    out: list[Finding] = []
    for f in findings:
        keys = [("src", f.source.path, f.source.line_start, f.source.line_end), ("claim", _norm(f.claim))]
        hit = next((seen[k] for k in keys if k in seen), None)
        if hit is not None:
            extra = f"{f.source.path}:{f.source.line_start}-{f.source.line_end}"
            if hit.note is None or extra not in hit.note:
                hit.note = ((hit.note + "; ") if hit.note else "also at ") + extra
            continue
        for k in keys:
            seen[k] = f
        out.append(f)
    return out


async def reduce_findings(model: Model | None, findings: list[Finding], question: str, *,
                          fits: Callable[[list[Finding]], bool], size: Callable[[list[Finding]], int],
                          budget: Budget, timeout: float, log: Callable[[str], None] | None = None,
                          recipe_name: str = "giant-file",
                          ) -> tuple[list[Finding], ReduceInfo]:
    """`recipe_name`: whose [merge] prompt words the merge calls (ask's giant-file, the
    repository recipes); the guards and the stop rule are the same for every recipe."""
    info = ReduceInfo()

    def note(msg: str) -> None:
        info.log.append(msg)
        if log:
            log(msg)

    agg = dedupe(findings)
    if len(agg) < len(findings):
        note(f"deterministic merge: {len(findings)} -> {len(agg)} findings")
    while not fits(agg):
        before = size(agg)
        why = budget.exhausted()
        if why or model is None:
            info.stopped = "budget"
            note(f"stopped before round {info.rounds + 1}: {why or 'no model calls allowed'}")
            break
        info.rounds += 1
        try:
            agg = await _model_round(model, agg, question, budget, timeout, note, recipe_name)
        except BudgetExhausted as e:
            info.stopped = "budget"
            note(f"round {info.rounds} stopped: {e}")
            break
        agg = dedupe(agg)
        after = size(agg)
        note(f"round {info.rounds}: size {before} -> {after} ({len(agg)} findings)")
        if after >= before:
            info.stopped = "no_progress"
            note(f"round {info.rounds} did not shrink the aggregate: stopping")
            break
    else:
        info.stopped = "fits"
    return agg, info


async def _model_round(model: Model, agg: list[Finding], question: str, budget: Budget,
                       timeout: float, note: Callable[[str], None],
                       recipe_name: str = "giant-file") -> list[Finding]:
    t = recipe.task(recipe_name, "merge")
    out_model = recipe.schema_model(recipe_name, "merge")
    result: list[Finding] = []
    for b in range(0, len(agg), BATCH):
        batch = agg[b:b + BATCH]
        if len(batch) < 2:
            result.extend(batch)
            continue
        msgs = recipe.messages(recipe_name, "merge", question=question, material=render(batch))
        try:
            res, _ = await call_json(model, msgs, out_model,
                                     Limits(max_tokens=t["max_tokens"], timeout=timeout), budget)
        except ModelCallError as e:
            note(f"merge batch {b // BATCH + 1} failed ({e.reason}); its findings stay unmerged")
            result.extend(batch)
            continue
        used: set[int] = set()
        for g in res.groups:
            ids = [i for i in dict.fromkeys(g.ids) if 1 <= i <= len(batch) and i not in used]
            if len(ids) < 2:
                continue
            inputs = [batch[i - 1] for i in ids]
            required = set().union(*(numbers_and_ids(f.claim) for f in inputs))
            missing = required - numbers_and_ids(g.claim)
            if missing:
                note(f"refused a merge of {len(ids)} findings: it dropped {sorted(missing)[:5]}")
                continue
            added = _added(g.claim, inputs)
            if added:
                note(f"refused a merge of {len(ids)} findings: it added {sorted(added)[:5]}, "
                     "which none of them holds")
                continue
            first = inputs[0]
            others = ", ".join(f"{f.source.path}:{f.source.line_start}-{f.source.line_end}"
                               for f in inputs[1:])
            # the others' own places (earlier merges, duplicates) come along: a merge of merges
            # keeps naming every line its claim speaks for
            carried = "".join(f"; {f.note}" for f in inputs[1:] if f.note)
            merged = first.model_copy(update={
                "claim": g.claim.strip(),
                "note": (first.note + "; " if first.note else "") + f"merged with {others}"
                + carried,
            })
            result.append(merged)
            used.update(ids)
        result.extend(f for i, f in enumerate(batch, 1) if i not in used)
    return result
