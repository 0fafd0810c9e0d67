"""Model calls of the repository recipes: the window one call may fill, one isolated and
validated sub-call of a recipe task (prompts in ``recipes/*.toml``, schemas in
:mod:`rlm.schemas_repo`), and the model's lifetime (resolve, call cache, Ctrl-C, close)."""

from __future__ import annotations

import time
import uuid
from typing import Awaitable, Callable

import anyio

from rlm import recipe, redact_model, schemas_repo, store
from rlm.engine.budget import Budget, watch_sigint
from rlm.engine.call import call_json
from rlm.models.base import Limits, Model

CHARS_PER_TOKEN = 3.0  # code, conservative (SmolLM2 measured ~3.2 on Python)
PROMPT_OVERHEAD_TOKENS = 500  # instructions + schema + headers of one call


def new_run_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]


def window_chars(model: Model | None, usable_fraction: float, override: int | None = None,
                 lo: int = 1500, hi: int = 24_000) -> int:
    """Characters of material one call may carry: a fraction of the model's context."""
    if override:
        return max(200, int(override))
    ctx = getattr(model, "context_tokens", 8192) or 8192
    tokens = int(ctx * usable_fraction) - PROMPT_OVERHEAD_TOKENS
    return max(lo, min(hi, int(tokens * CHARS_PER_TOKEN)))


def est_tokens(chars: int) -> int:
    return int(chars / CHARS_PER_TOKEN) + 1


def task_limits(recipe_name: str, task: str, timeout: float) -> Limits:
    t = recipe.task(recipe_name, task)
    return Limits(max_tokens=int(t.get("max_tokens", 400)), timeout=timeout)


async def call_task(model: Model, recipe_name: str, task: str, budget: Budget, timeout: float,
                    **fields: str):
    """One isolated sub-call: the recipe's messages (constant part first, material last),
    validated against the task's schema from rlm.schemas_repo."""
    t = recipe.task(recipe_name, task)
    out = getattr(schemas_repo, t["schema"])
    msgs = recipe.messages(recipe_name, task, **fields)
    res, _usage = await call_json(model, msgs, out, task_limits(recipe_name, task, timeout), budget)
    return res


async def with_model(opts, fn: Callable[[Model, anyio.CancelScope, Budget], Awaitable],
                     model: Model | None, handle_sigint: bool, budget: Budget):
    """Resolve the model (unless given), run fn(model, scope, budget), close what we opened."""
    own = model is None
    if model is None:
        from rlm.models.registry import resolve_model

        model = resolve_model(opts.model, opts.base_url, opts.api_key, timeout=opts.timeout)
        model = store.wrap_model(model, opts)  # the same call cache as `ask`
    policy = redact_model.decide([model], getattr(opts, "redact", None))
    model = policy.wrap(model)  # outside the cache: the cache sees redacted prompts only
    try:
        scope = anyio.CancelScope()
        async with anyio.create_task_group() as tg:
            if handle_sigint:
                watch_sigint(budget, scope, tg)
            result = await fn(model, scope, budget)
            tg.cancel_scope.cancel()
        redact_model.declare_in_statement(policy, result)
        return result
    finally:
        if own:
            await model.aclose()
