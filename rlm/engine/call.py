"""One validated sub-call: messages in, a pydantic object out, or a clean failure reason.

Model output is untrusted data. It is parsed and validated, never executed; invalid output is
retried with the validation error appended, and after `attempts` the call fails with a reason
that ends up in the coverage statement.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TypeVar

import orjson
from pydantic import BaseModel, ValidationError

from rlm.engine.budget import Budget
from rlm.errors import BudgetExhausted, ModelCallError
from rlm.models.base import Limits, Model, Usage

T = TypeVar("T", bound=BaseModel)


@lru_cache(maxsize=None)  # pydantic builds it in ~0.5 ms: once per model class, not per call
def schema_for(out: type[BaseModel]) -> dict:
    return out.model_json_schema()


def _short_error(e: ValidationError) -> str:
    parts = []
    for err in e.errors()[:3]:
        loc = ".".join(str(x) for x in err["loc"]) or "(root)"
        parts.append(f"{loc}: {err['msg']}")
    return "; ".join(parts)


async def call_json(model: Model, messages: list[dict], out: type[T], limits: Limits,
                    budget: Budget, attempts: int = 3) -> tuple[T, Usage]:
    """Ask until the reply validates as `out`. Raises ModelCallError (with reason) or
    BudgetExhausted. Usage of every attempt is charged to the budget."""
    schema = schema_for(out)
    msgs = list(messages)
    total = Usage()
    last = ""
    for attempt in range(attempts):
        why = budget.exhausted()
        if why:
            raise BudgetExhausted(why)
        # a retry at the same temperature would repeat a greedy model's mistake word for word
        lim = limits if attempt == 0 else Limits(limits.max_tokens,
                                                 min(1.0, limits.temperature + 0.4 * attempt),
                                                 limits.timeout)
        comp = await model.complete(msgs, schema, lim, schema_name=out.__name__)
        if not comp.usage.calls and not comp.usage.cached_calls:  # a cache hit stays calls=0
            comp.usage.calls = 1
        budget.charge(comp.usage)
        total.add(comp.usage)
        data = comp.data
        if data is None:
            try:
                data = orjson.loads(comp.text)
            except orjson.JSONDecodeError:
                last = f"reply is not valid JSON: {comp.text[:60]!r}"
                data = None
        if data is not None:
            try:
                return out.model_validate(data), total
            except ValidationError as e:
                last = f"reply does not match the schema: {_short_error(e)}"
        if hasattr(model, "forget"):  # rejected: never serve this reply from the call cache
            model.forget(comp)
        if attempt + 1 < attempts:
            msgs = list(messages) + [
                {"role": "assistant", "content": comp.text[:2000]},
                {"role": "user", "content": f"That reply was rejected: {last}. Answer again with "
                 "JSON only, matching the schema exactly."},
            ]
    raise ModelCallError(f"invalid output after {attempts} attempts: {last}")
