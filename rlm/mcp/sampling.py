"""A `Model` whose calls go to the MCP client's own model through sampling (`--model sampling`).

Each rlm sub-call stays one isolated request: the system text becomes the sampling system prompt,
the user text the one message, and the JSON schema is stated in the system prompt (sampling has
no structured-output mode). The reply is parsed here and validated by the caller exactly as for
any model (rlm.engine.call: schema validation, retries with the error, then a failed chunk).

On a handshake-era connection (protocol up to 2025-11-25) each call is a `sampling/createMessage`
request over the back-channel; on a 2026-07-28 connection, which has none, the requests go to
the client in the tool call's InputRequiredResult rounds (RoundSamplingModel, rlm.mcp.rounds).
Either way the client must declare the `sampling` capability; where it does not,
`sampling_unavailable` says why in one line and the tool runs code-only instead.
"""

from __future__ import annotations

import json
import math
from typing import Any

import anyio

from rlm.errors import ModelCallError
from rlm.mcp.worker import on_server_loop
from rlm.models.base import Completion, Limits, Usage

DEFAULT_CONTEXT_TOKENS = 32_000  # unknown for the client's model; --sampling-context overrides
ATTEMPTS = 2  # a sampling request that errors or times out is sent once more


def sampling_unavailable(ctx: Any) -> str | None:
    """Why sampling cannot be used on this request (None when it can)."""
    from mcp_types import ClientCapabilities, SamplingCapability

    session = ctx.session
    if not session.check_client_capability(ClientCapabilities(sampling=SamplingCapability())):
        return "the MCP client does not support sampling"
    if not session.can_send_request:
        return ("this MCP connection has no server-to-client channel for sampling "
                f"(protocol {session.protocol_version})")
    return None


def _schema_instruction(schema: dict | None) -> str:
    if not schema:
        return ""
    return ("\n\nReply with one JSON object only: no prose, no code fences. It must validate "
            "against this JSON schema:\n" + json.dumps(schema, separators=(",", ":")))


class SamplingModel:
    """rlm's Model protocol over `sampling/createMessage` of the current request's session."""

    name = "sampling"

    def __init__(self, ctx: Any, context_tokens: int = DEFAULT_CONTEXT_TOKENS):
        import asyncio

        self._ctx = ctx
        self._loop = asyncio.get_running_loop()  # the server's loop: runs may call from a worker
        self.context_tokens = context_tokens
        self.client_models: set[str] = set()  # what the client said it used

    def describe(self) -> str:
        used = ", ".join(sorted(self.client_models)) or "not called yet"
        return f"sampling via the MCP client (models: {used}; context assumed {self.context_tokens:,})"

    def count_tokens(self, text: str) -> int:
        return math.ceil(len(text) / 4)  # no tokenizer for the client's model: a ratio

    async def aclose(self) -> None:
        return None

    async def complete(self, messages: list[dict[str, str]], schema: dict | None, limits: Limits,
                       schema_name: str = "result") -> Completion:
        from mcp_types import SamplingMessage, TextContent

        system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
        system += _schema_instruction(schema)
        convo = [SamplingMessage(role="assistant" if m["role"] == "assistant" else "user",
                                 content=TextContent(type="text", text=m["content"]))
                 for m in messages if m["role"] != "system"]
        last = "no attempt"
        for _ in range(ATTEMPTS):
            try:
                res = await on_server_loop(self._loop, lambda: self._sample(convo, system, limits))
            except TimeoutError:
                last = f"sampling request timed out after {limits.timeout:g}s"
                continue
            except Exception as e:  # noqa: BLE001 - MCPError, a closed channel: the chunk fails
                last = f"sampling request failed: {type(e).__name__}: {str(e)[:160]}"
                continue
            return self._completion(res, system, convo)
        raise ModelCallError(last)

    async def _sample(self, convo: list, system: str, limits: Limits) -> Any:
        """On the server loop, where the request's session lives."""
        with anyio.fail_after(limits.timeout):
            return await self._ctx.session.create_message(
                convo, max_tokens=limits.max_tokens, system_prompt=system or None,
                temperature=limits.temperature, related_request_id=self._ctx.request_id)

    def _completion(self, res: Any, system: str, convo: list) -> Completion:
        from rlm.models.json_text import parse_json_text

        content = res.content
        text = getattr(content, "text", None)
        if text is None:
            raise ModelCallError(f"sampling reply is {getattr(content, 'type', '?')} content, not text")
        self.client_models.add(str(res.model))
        prompt_chars = len(system) + sum(len(m.content.text) for m in convo)
        # sampling reports no token counts: estimated at 4 characters a token
        usage = Usage(prompt_tokens=math.ceil(prompt_chars / 4),
                      completion_tokens=math.ceil(len(text) / 4), calls=1)
        return Completion(text=text, data=parse_json_text(text), usage=usage, model=str(res.model))


class _NoModel:
    """Stands in for the code-only `none` model where this build has none: every model call
    fails with a clear reason, so chunks only a model could read are reported as failed while
    what code found (grep hits, profile candidates) stays in the report."""

    name = "none"

    def __init__(self, why: str, context_tokens: int = DEFAULT_CONTEXT_TOKENS):
        self.why = why
        self.context_tokens = context_tokens

    def count_tokens(self, text: str) -> int:
        return math.ceil(len(text) / 4)

    async def complete(self, messages, schema, limits: Limits, schema_name: str = "result"):
        raise ModelCallError(f"no model: {self.why}")

    async def aclose(self) -> None:
        return None


def code_only_model(why: str) -> tuple[Any, str]:
    """The code-only model (rlm.models.none; a stand-in that fails calls where a build has
    none) and the one-line notice that says why the run is code-only."""
    try:
        from rlm.models.none import CodeOnlyModel
    except ImportError:
        return _NoModel(why), (f"{why}: no model reads this run, and this build has no "
                               "code-only mode, so chunks only a model could read are failed")
    return CodeOnlyModel(), f"{why}: running code-only"


class RoundSamplingModel(SamplingModel):
    """Sampling on a 2026-07-28 connection: each request waits for the client's next round of
    the same tool call (rlm.mcp.rounds), since the server cannot send it a request mid-call."""

    def __init__(self, conversation: Any, context_tokens: int = DEFAULT_CONTEXT_TOKENS):
        super().__init__(None, context_tokens)
        self._conv = conversation

    async def _sample(self, convo: list, system: str, limits: Limits) -> Any:
        from mcp_types import CreateMessageRequest, CreateMessageRequestParams, CreateMessageResult

        req = CreateMessageRequest(params=CreateMessageRequestParams(
            messages=convo, max_tokens=limits.max_tokens, system_prompt=system or None,
            temperature=limits.temperature))
        resp = await self._conv.sample(req, limits.timeout)
        if not isinstance(resp, CreateMessageResult):
            resp = CreateMessageResult.model_validate(
                resp.model_dump(mode="json", by_alias=True, exclude_none=True))
        return resp
