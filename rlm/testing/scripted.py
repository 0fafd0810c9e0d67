"""A scripted in-process model: the Model protocol without a server, for library users' tests.

Answers are routed like the fake server's: by the schema name a call asks for (``on(name, fn)``),
else by ``default`` (a minimal instance of the call's JSON schema). A responder is
``fn(messages, schema) -> dict | list | str``; a dict or list is sent back as JSON text, a str
verbatim (so a test can script invalid JSON too). Every call is recorded in ``calls``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable

from rlm.errors import ModelCallError
from rlm.models.base import Completion, Limits, Usage, before_request
from rlm.models.profile import ModelProfile
from rlm.testing.wire import estimate_tokens, minimal_instance

ScriptedResponder = Callable[[list[dict[str, str]], "dict | None"], Any]


@dataclass
class ScriptedCall:
    messages: list[dict[str, str]]
    schema: dict | None
    schema_name: str
    text: str = ""


def _minimal(messages: list[dict[str, str]], schema: dict | None) -> Any:
    return minimal_instance(schema) if schema else {}


@dataclass(eq=False)  # hashable by identity, like every model
class ScriptedModel:
    """``ScriptedModel().on("MapResult", lambda msgs, schema: {"findings": []})``."""

    name: str = "scripted"
    context_tokens: int = 8192
    default: ScriptedResponder = _minimal
    calls: list[ScriptedCall] = field(default_factory=list)
    _responders: dict[str, ScriptedResponder] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # a served model's profile: in-process, but it reads like a model that was asked
        self.profile = ModelProfile(tier="served", context_tokens=self.context_tokens,
                                    speed_source="scripted")

    def on(self, schema_name: str, fn: ScriptedResponder) -> "ScriptedModel":
        self._responders[schema_name] = fn
        return self

    def count_tokens(self, text: str) -> int:
        return estimate_tokens(text)

    async def complete(self, messages: list[dict[str, str]], schema: dict[str, Any] | None,
                       limits: Limits, schema_name: str = "result") -> Completion:
        before_request()  # the run's budget may refuse this call
        call = ScriptedCall(messages, schema, schema_name)
        self.calls.append(call)
        fn = self._responders.get(schema_name) or self._responders.get(
            (schema or {}).get("title", "")) or self.default
        try:
            out = fn(messages, schema)
        except Exception as e:  # noqa: BLE001 - a broken script is a failed call, said
            raise ModelCallError(f"scripted responder raised {type(e).__name__}: {e}") from e
        call.text = out if isinstance(out, str) else json.dumps(out)
        try:
            data = json.loads(call.text)
        except ValueError:
            data = None
        prompt = "\n".join(str(m.get("content", "")) for m in messages)
        usage = Usage(estimate_tokens(prompt), estimate_tokens(call.text), 1)
        return Completion(call.text, data, usage, self.name)

    async def aclose(self) -> None:
        return None

    def describe(self) -> str:
        return f"{self.name} (scripted, in-process; context {self.context_tokens} tokens)"
