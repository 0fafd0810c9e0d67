"""Model calls of the repository recipes: one isolated and validated sub-call of a recipe task
(prompts in ``recipes/*.toml``, schemas in :mod:`rlm.schemas.calls`). The window comes from the
one sizer (rlm.engine.window); the model's lifetime from the Session (rlm.engine.session)."""

from __future__ import annotations

from rlm.prompts import recipe
from rlm.schemas import calls
from rlm.engine.budget import Budget
from rlm.engine.call import call_json
from rlm.models.base import Limits, Model
from rlm.engine.window import est_tokens, window_chars  # noqa: F401 - the one window sizer


def task_limits(recipe_name: str, task: str, timeout: float) -> Limits:
    t = recipe.task(recipe_name, task)
    return Limits(max_tokens=int(t.get("max_tokens", 400)), timeout=timeout)


async def call_task(model: Model, recipe_name: str, task: str, budget: Budget, timeout: float,
                    **fields: str):
    """One isolated sub-call: the recipe's messages (constant part first, material last),
    validated against the task's schema from rlm.schemas.calls."""
    t = recipe.task(recipe_name, task)
    out = getattr(calls, t["schema"])
    msgs = recipe.messages(recipe_name, task, **fields)
    res, _usage = await call_json(model, msgs, out, task_limits(recipe_name, task, timeout), budget)
    return res
