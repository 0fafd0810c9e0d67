"""One validated sub-call: messages in, a pydantic object out, or a clean failure reason.

Model output is untrusted data. It is parsed and validated, never executed; invalid output is
retried with the validation error appended, and after `attempts` the call fails with a reason
that ends up in the coverage statement.
"""

from __future__ import annotations

from contextvars import ContextVar
from functools import lru_cache
from typing import Callable, TypeVar

import orjson
from pydantic import BaseModel, ValidationError

from rlm.engine.budget import Budget
from rlm.errors import BudgetExhausted, ModelCallError
from rlm.models.base import Completion, Limits, Model, Usage, request_guard, request_lost_hook

T = TypeVar("T", bound=BaseModel)

# Where rejected replies go (the run record sets it for a run): the raw reply and why it was
# refused, so a user can see why a call failed. The sink scrubs secrets when it stores.
on_rejected: ContextVar[Callable[[dict], None] | None] = ContextVar("rlm_on_rejected",
                                                                    default=None)


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
                    budget: Budget, attempts: int = 3,
                    check: Callable[[T], str | None] | None = None) -> tuple[T, Usage]:
    """Ask until the reply validates as `out` (and passes `check`, which returns why a valid
    reply is still refused, e.g. an echo of the prompt). Raises ModelCallError (with reason) or
    BudgetExhausted. Usage of every attempt is charged to the budget."""
    schema = schema_for(out)
    msgs = list(messages)
    total = Usage()
    last = ""
    for attempt in range(attempts):
        why = budget.exhausted()
        if why:
            raise _stopped(why, total.calls)
        # a retry at the same temperature would repeat a greedy model's mistake word for word
        lim = limits if attempt == 0 else Limits(limits.max_tokens,
                                                 min(1.0, limits.temperature + 0.4 * attempt),
                                                 limits.timeout)
        left = budget.remaining_s()
        if left is not None:  # the wall-time cap bounds the request too
            lim = Limits(lim.max_tokens, lim.temperature, max(0.1, min(lim.timeout, left)))
        try:
            comp = await _guarded(model, msgs, schema, lim, out.__name__, budget)
        except BudgetExhausted as e:
            raise _stopped(str(e), total.calls + e.attempts) from None
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
                res = out.model_validate(data)
            except ValidationError as e:
                last = f"reply does not match the schema: {_short_error(e)}"
            else:
                why = check(res) if check else None
                if why is None:
                    return res, total
                last = why
        if hasattr(model, "forget"):  # rejected: never serve this reply from the call cache
            model.forget(comp)
        sink = on_rejected.get()
        if sink is not None:
            sink({"schema": out.__name__, "attempt": attempt + 1, "reason": last,
                  "reply": comp.text[:4000]})
        if attempt + 1 < attempts:
            msgs = list(messages) + [
                {"role": "assistant", "content": comp.text[:2000]},
                {"role": "user", "content": f"That reply was rejected: {last}. Answer again with "
                 "JSON only, matching the schema exactly."},
            ]
    raise ModelCallError(f"invalid output after {attempts} attempts: {last}")


def _stopped(why: str, attempts: int) -> BudgetExhausted:
    e = BudgetExhausted(why)
    e.attempts = attempts
    return e


def request_tokens(model: Model, messages: list[dict], max_tokens: int) -> int:
    """Worst case of one request: the prompt (with a margin: the server's tokenizer and
    template differ from the estimate) plus every completion token it may generate."""
    prompt = sum(model.count_tokens(str(m.get("content") or "")) + 4 for m in messages)
    return int(prompt * 1.15) + 16 + max_tokens


async def _guarded(model: Model, msgs: list[dict], schema: dict, lim: Limits, name: str,
                   budget: Budget) -> Completion:
    """model.complete with every request it sends (retries included) reserved in the budget
    first; requests that failed still count as calls, and requests that got no answer (timed
    out, dropped) keep their worst-case tokens spent: the server may still bill them."""
    est = request_tokens(model, msgs, lim.max_tokens)
    sent = lost = 0

    def guard() -> None:
        nonlocal sent
        budget.reserve(est)
        sent += 1

    def on_lost() -> None:
        nonlocal lost
        lost += 1

    token = request_guard.set(guard)
    lost_token = request_lost_hook.set(on_lost)
    try:
        comp = await model.complete(msgs, schema, lim, schema_name=name)
    except BaseException as e:
        if isinstance(e, BudgetExhausted):
            e.attempts = sent
        budget.release(sent, sent * est)
        budget.charge(Usage(calls=sent))
        budget.spend_unanswered(lost * est)
        if getattr(e, "unreachable", False):
            budget.endpoint_down(str(e))
        raise
    finally:
        request_guard.reset(token)
        request_lost_hook.reset(lost_token)
    budget.release(sent, sent * est)
    budget.spend_unanswered(lost * est)
    if sent:
        budget.endpoint_up()
        comp.usage.calls = sent
    elif not comp.usage.calls and not comp.usage.cached_calls:  # a cache hit stays calls=0
        comp.usage.calls = 1
    budget.charge(comp.usage)
    return comp
