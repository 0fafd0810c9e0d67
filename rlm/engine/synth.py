"""Synthesis from a fresh, clean prompt: the question and verified findings, nothing else.

No transcript of earlier calls and no raw tool output reach this prompt. If the findings do
not fit, they are cut and the cut is declared both in the prompt and in the answer.
"""

from __future__ import annotations

from dataclasses import dataclass

from rlm.prompts import recipe
from rlm.engine.budget import Budget
from rlm.engine.call import call_json
from rlm.verify.echo import echo_reason
from rlm.engine.reducer import render
from rlm.errors import BudgetExhausted, ModelCallError
from rlm.models.base import Limits, Model
from rlm.schemas.report import Finding


@dataclass
class Synthesis:
    text: str | None = None  # the model's answer (None when no call was made or it failed)
    cites: list[int] | None = None  # 1-based indexes into the findings given
    used: int = 0  # how many findings the prompt held
    cut_note: str = ""
    error: str | None = None


def fit_count(model: Model, findings: list[Finding], window_tokens: int) -> int:
    """How many findings (in order) fit the window."""
    total = 0
    for i, f in enumerate(findings):
        total += model.count_tokens(render([f])) + 2
        if total > window_tokens:
            return i
    return len(findings)


async def synthesize(model: Model, question: str, findings: list[Finding], budget: Budget,
                     window_tokens: int, timeout: float, recipe_name: str = "giant-file",
                     ) -> Synthesis:
    """`recipe_name`: whose [synth] prompt words the call (ask's giant-file, or a repository
    recipe); the fit, the cut note and the echo check are the same for every recipe."""
    out = Synthesis()
    if not findings:
        return out
    k = fit_count(model, findings, window_tokens)
    out.used = k
    if k < len(findings):
        out.cut_note = (f"only {k} of {len(findings)} verified findings fit the synthesis prompt; "
                        f"the other {len(findings) - k} are listed below but were not summarised")
    if k == 0:
        out.error = "no finding fits the synthesis window"
        return out
    note = f"Note: {out.cut_note}.\n" if out.cut_note else ""
    t = recipe.task(recipe_name, "synth")
    material = render(findings[:k])
    msgs = recipe.messages(recipe_name, "synth", question=question, note=note,
                           material=material)
    try:
        res, _ = await call_json(model, msgs, recipe.schema_model(recipe_name, "synth"),
                                 Limits(max_tokens=t["max_tokens"], timeout=timeout), budget,
                                 check=lambda r: echo_reason(r.answer, msgs, material, question))
    except (ModelCallError, BudgetExhausted) as e:
        out.error = getattr(e, "reason", str(e))
        return out
    out.text = res.answer.strip()
    out.cites = [c for c in res.cites if 1 <= c <= k]
    return out
