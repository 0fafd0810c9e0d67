"""OpenAI-compatible chat-completions client (OpenAI, vLLM, llama.cpp server, Ollama).

Structured output is asked for with the strongest ``response_format`` the endpoint accepts, in
this order, and the first mode that works is remembered per base URL for the whole process:

1. ``{"type": "json_schema", "json_schema": {"name", "schema", "strict": false}}`` (OpenAI, vLLM)
2. ``{"type": "json_object", "schema": schema}`` (llama.cpp server, which answers HTTP 500 to 1.)
3. ``{"type": "json_object"}``
4. no ``response_format``: plain text, parsed leniently.

While no mode is confirmed for an endpoint, HTTP 400/422 (or an error body that talks about
response_format/schema) moves on to the next mode; a bare HTTP 500 is retried once in the same
mode and then also moves on.  Once a mode is confirmed, errors are retried in that mode.

Transient failures (429, 5xx, timeouts, connection errors, dropped connections) are retried with
exponential backoff and jitter (honouring Retry-After, capped at 10 s); after ``max_attempts``
the call raises ``ModelCallError`` with a short reason.  When nothing ever answered at the base
URL (connection refused, DNS, no route on every attempt; or 401/403/404 before any success) the
call raises ``ModelUnreachable`` naming the URL.  The API key never appears in messages or repr.
"""

from __future__ import annotations

import asyncio
import math
import random
import re
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson
from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_attempt

from rlm.errors import ContextTooLong, ModelCallError, ModelUnreachable
from rlm.models.base import Completion, Limits, Usage, before_request, request_lost
from rlm.models.http_errors import (
    _CONTEXT_ERROR, _conn_cause, _error_message, _retry_after, _short,
)
from rlm.models.urls import redact_url  # noqa: F401 - read from here too
from rlm.models.json_text import parse_json_text

MODES = ("json_schema", "json_object+schema", "json_object", "text")
BACKOFF_CAP = 30.0


@dataclass
class _EndpointState:
    confirmed: str | None = None  # best structured-output mode that has worked
    refused: set[str] = field(default_factory=set)  # modes the endpoint explicitly refused
    reached: bool = False  # some HTTP answer (any status) came back at least once


# base_url -> what we learnt about it (shared by all model instances in the process)
_ENDPOINTS: dict[str, _EndpointState] = {}


def reset_mode_cache() -> None:
    """Forget what was learnt about every endpoint (for tests)."""
    _ENDPOINTS.clear()


def confirmed_mode(base_url: str) -> str | None:
    st = _ENDPOINTS.get(_norm_base(base_url))
    return st.confirmed if st else None


def _norm_base(base_url: str) -> str:
    b = base_url.strip().rstrip("/")
    if b.endswith("/chat/completions"):
        b = b[: -len("/chat/completions")]
    return b


class _Transient(Exception):
    """One failed attempt that is worth retrying."""

    def __init__(self, kind: str, detail: str = "", retry_after: float | None = None, status: int | None = None):
        super().__init__(kind)
        self.kind = kind  # "http" | "timeout" | "connect" | "dropped" | "bad_response"
        self.detail = detail
        self.retry_after = retry_after
        self.status = status


class _ModeRefused(Exception):
    """The endpoint does not accept this response_format mode: try the next one."""

    def __init__(self, status: int, explicit: bool):
        super().__init__(status)
        self.status = status
        self.explicit = explicit


_MODE_ERROR_WORDS = ("response_format", "json_schema", "json_object", "schema", "grammar", "response format")


def _safe_schema_name(name: str) -> str:
    s = re.sub(r"[^A-Za-z0-9_-]", "_", name or "")[:64]
    return s or "result"


class OpenAICompatModel:
    """A ``Model`` over an OpenAI-compatible ``/chat/completions`` endpoint."""

    def __init__(
        self,
        name: str,
        base_url: str,
        api_key: str | None = None,
        context_tokens: int = 8192,
        timeout: float = 120.0,
        max_attempts: int = 4,
        backoff_base: float = 0.5,
        chars_per_token: float = 4.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ):
        self.name = name
        self.base_url = _norm_base(base_url)
        self._api_key = api_key or None
        self.context_tokens = int(context_tokens)
        self.timeout = float(timeout)
        self.max_attempts = max(1, int(max_attempts))
        self.backoff_base = float(backoff_base)
        self.chars_per_token = float(chars_per_token) if chars_per_token > 0 else 4.0
        self._transport = transport
        self._client: httpx.AsyncClient | None = None
        self._client_loop: Any = None

    # -- presentation (never the key)
    def __repr__(self) -> str:
        return (
            f"OpenAICompatModel(name={self.name!r}, base_url={redact_url(self.base_url)!r}, "
            f"context_tokens={self.context_tokens}, key={'set' if self._api_key else 'none'})"
        )

    __str__ = __repr__

    def describe(self) -> str:
        return (
            f"{self.name} at {redact_url(self.base_url)} (OpenAI-compatible, context {self.context_tokens} tokens, "
            f"api key {'set' if self._api_key else 'not set'})"
        )

    @property
    def endpoint(self) -> str:
        return self.base_url + "/chat/completions"

    @property
    def confirmed_mode(self) -> str | None:
        return self._state().confirmed

    @property
    def profile(self):
        """A served model: its context, and the structured-output mode its endpoint confirmed.
        Its speed is not measured (estimates give no seconds for it)."""
        from rlm.models.profile import ModelProfile

        return ModelProfile(tier="served", context_tokens=self.context_tokens,
                            structured_output=confirmed_mode(self.base_url),  # no side effect
                            call_timeout_s=self.timeout)

    def count_tokens(self, text: str) -> int:
        return math.ceil(len(text) / self.chars_per_token) if text else 0

    # -- client lifecycle
    def _get_client(self) -> httpx.AsyncClient:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if self._client is None or self._client.is_closed or self._client_loop is not loop:
            headers = {"Content-Type": "application/json", "Accept": "application/json"}
            if self._api_key:
                headers["Authorization"] = f"Bearer {self._api_key}"
            self._client = httpx.AsyncClient(
                headers=headers,
                timeout=httpx.Timeout(self.timeout),
                transport=self._transport,
                limits=httpx.Limits(max_connections=64, max_keepalive_connections=32),
            )
            self._client_loop = loop
        return self._client

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None and not client.is_closed:
            try:
                await client.aclose()
            except RuntimeError:  # created on another (closed) event loop
                pass

    # -- the call
    def _state(self) -> _EndpointState:
        return _ENDPOINTS.setdefault(self.base_url, _EndpointState())

    def _scrub(self, text: str) -> str:
        if self._api_key and self._api_key in text:
            text = text.replace(self._api_key, "***")
        return text

    def _body(self, messages: list[dict[str, str]], schema: dict | None, limits: Limits, schema_name: str, mode: str) -> dict:
        body: dict[str, Any] = {
            "model": self.name,
            "messages": messages,
            "max_tokens": int(limits.max_tokens),
            "temperature": float(limits.temperature),
            "stream": False,
        }
        if schema is not None:
            if mode == "json_schema":
                body["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": _safe_schema_name(schema_name), "schema": schema, "strict": False},
                }
            elif mode == "json_object+schema":
                body["response_format"] = {"type": "json_object", "schema": {**schema, "title": schema_name}}
            elif mode == "json_object":
                body["response_format"] = {"type": "json_object"}
        return body

    def _wait(self, retry_state: Any) -> float:
        exc = retry_state.outcome.exception() if retry_state.outcome else None
        if isinstance(exc, _Transient) and exc.retry_after is not None:
            return exc.retry_after
        d = min(self.backoff_base * (2 ** (retry_state.attempt_number - 1)), BACKOFF_CAP)
        return d / 2 + random.uniform(0, d / 2)

    async def complete(
        self,
        messages: list[dict[str, str]],
        schema: dict[str, Any] | None,
        limits: Limits,
        schema_name: str = "result",
    ) -> Completion:
        limits = limits or Limits()
        timeout = min(self.timeout, float(limits.timeout)) if limits.timeout else self.timeout
        st = self._state()
        if schema is None:
            modes = ["text"]
        elif st.confirmed:
            modes = [st.confirmed]
        else:
            modes = [m for m in MODES if m not in st.refused] or ["text"]

        failures: list[_Transient] = []  # transient failures of this call, across modes
        sent = [0]  # HTTP requests sent for this call, across modes
        for i, mode in enumerate(modes):
            can_fall_back = st.confirmed is None and schema is not None and i < len(modes) - 1
            body = self._body(messages, schema, limits, schema_name, mode)
            try:
                data = await self._call_with_retries(body, timeout, can_fall_back, failures, sent)
            except _ModeRefused as r:
                if r.explicit:
                    st.refused.add(mode)
                continue
            if schema is not None and (st.confirmed is None or MODES.index(mode) < MODES.index(st.confirmed)):
                st.confirmed = mode
            return self._completion(data, messages)
        raise ModelCallError("no response_format mode was accepted by the server")  # pragma: no cover

    async def _call_with_retries(
        self, body: dict, timeout: float, can_fall_back: bool, failures: list[_Transient], sent: list[int]
    ) -> dict:
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.max_attempts),
            wait=self._wait,
            retry=retry_if_exception_type(_Transient),
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    sent[0] += 1
                    try:
                        return await self._attempt(body, timeout, can_fall_back, attempt.retry_state.attempt_number)
                    except _Transient as t:
                        failures.append(t)
                        raise
        except _Transient:
            pass
        raise self._give_up(failures, sent[0], timeout) from None

    def _give_up(self, failures: list[_Transient], n: int, timeout: float) -> Exception:
        last = failures[-1]
        st = self._state()
        url = redact_url(self.base_url)
        if all(f.kind == "connect" for f in failures) and not st.reached:
            return ModelUnreachable(self._scrub(f"cannot reach model server at {url}: {last.detail}"))
        att = f"{n} attempt{'s' if n != 1 else ''}"
        if last.kind == "http":
            reason = f"HTTP {last.status} after {att}"
            if last.detail:
                reason += f": {last.detail}"
        elif last.kind == "timeout":
            reason = f"timeout after {att} ({timeout:.1f} s each)"
        elif last.kind == "connect":
            reason = f"cannot connect to {url} after {att}: {last.detail}"
        elif last.kind == "dropped":
            reason = f"connection dropped after {att}"
        else:
            reason = f"bad response after {att}: {last.detail}"
        err = ModelCallError(self._scrub(reason))
        err.unreachable = all(f.kind in ("connect", "dropped") for f in failures)
        return err

    async def _attempt(self, body: dict, timeout: float, can_fall_back: bool, attempt_no: int) -> dict:
        client = self._get_client()
        st = self._state()
        before_request()  # the run's budget reserves this request (retries too) or refuses it
        try:
            resp = await client.post(self.endpoint, content=orjson.dumps(body), timeout=httpx.Timeout(timeout))
        except httpx.ConnectTimeout as e:
            raise _Transient("connect", _conn_cause(e)) from None
        except httpx.TimeoutException:
            request_lost()  # sent, unanswered: the server may still run (and bill) it
            raise _Transient("timeout") from None
        except httpx.ConnectError as e:
            raise _Transient("connect", _conn_cause(e)) from None
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError, httpx.CloseError) as e:
            request_lost()
            raise _Transient("dropped", _short(str(e) or type(e).__name__, 100)) from None
        except httpx.TransportError as e:
            request_lost()
            raise _Transient("dropped", _short(str(e) or type(e).__name__, 100)) from None

        was_reached = st.reached
        st.reached = True
        status = resp.status_code
        if status == 200:
            try:
                data = orjson.loads(resp.content)
            except orjson.JSONDecodeError:
                raise _Transient("bad_response", "response body is not JSON") from None
            if not isinstance(data, dict) or not isinstance(data.get("choices"), list) or not data["choices"]:
                raise _Transient("bad_response", "response has no choices")
            return data

        msg = self._scrub(_error_message(resp))
        if status in (400, 413, 422, 500) and _CONTEXT_ERROR.search(msg):
            # not a refused response_format and nothing a retry fixes: the caller splits
            raise ContextTooLong(f"HTTP {status}: the prompt does not fit the model's context "
                                 f"({_short(msg, 100)})")
        mentions_mode = any(w in msg.lower() for w in _MODE_ERROR_WORDS)
        if can_fall_back and "response_format" in body:
            if status in (400, 422) or (status in (400, 422, 500) and mentions_mode):
                raise _ModeRefused(status, explicit=True)
            if status == 500 and attempt_no >= 2:
                raise _ModeRefused(status, explicit=False)
        if status == 429 or status >= 500 or status == 408:
            raise _Transient("http", msg, retry_after=_retry_after(resp), status=status)
        url = redact_url(self.base_url)
        if status in (401, 403, 404) and not was_reached:
            hint = {401: "check the API key", 403: "check the API key", 404: "check the model name and --base-url (it usually ends in /v1)"}[status]
            raise ModelUnreachable(self._scrub(f"model server at {url} answered HTTP {status} ({hint}): {msg}"))
        raise ModelCallError(self._scrub(f"HTTP {status}: {msg}" if msg else f"HTTP {status}"))

    def _completion(self, data: dict, messages: list[dict[str, str]]) -> Completion:
        choice = data["choices"][0] if isinstance(data["choices"][0], dict) else {}
        msg = choice.get("message") or {}
        content = msg.get("content")
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        text = content if isinstance(content, str) else ""
        u = data.get("usage") if isinstance(data.get("usage"), dict) else None
        if u and isinstance(u.get("prompt_tokens"), int):
            pt = int(u.get("prompt_tokens") or 0)
            ct = int(u.get("completion_tokens") or 0)
        else:
            pt = self.count_tokens("\n".join(str(m.get("content") or "") for m in messages))
            ct = self.count_tokens(text)
        return Completion(
            text=text,
            data=parse_json_text(text),
            usage=Usage(prompt_tokens=pt, completion_tokens=ct, calls=1),
            model=str(data.get("model") or self.name),
        )
