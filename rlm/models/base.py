"""The model seam: one async call from messages + JSON schema to text, parsed JSON and usage.

Everything above this layer (mapper, reducer, synthesis) talks only to `Model`; tests swap the
transport (a real HTTP fake server) rather than mocking our own code.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, runtime_checkable

# Set by the caller (rlm.engine.call) for the duration of one call: every model calls
# `before_request()` right before each request it sends, retries included, so a run's budget can
# reserve that request or refuse it (by raising) before anything is spent.
request_guard: ContextVar[Callable[[], None] | None] = ContextVar("rlm_request_guard",
                                                                  default=None)


def before_request() -> None:
    guard = request_guard.get()
    if guard is not None:
        guard()


# Set with request_guard: a model calls `request_lost()` when a request it sent got no answer
# (a read timeout, a dropped connection). The server may still process and bill it, so the
# run's budget keeps its worst case spent instead of counting nothing.
request_lost_hook: ContextVar[Callable[[], None] | None] = ContextVar("rlm_request_lost",
                                                                      default=None)


def request_lost() -> None:
    hook = request_lost_hook.get()
    if hook is not None:
        hook()


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    cached_calls: int = 0

    def add(self, other: "Usage") -> None:
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.calls += other.calls
        self.cached_calls += other.cached_calls

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass
class Limits:
    max_tokens: int = 512  # completion tokens for this call
    temperature: float = 0.0
    timeout: float = 120.0  # seconds for one HTTP request / one local generation


@dataclass
class Completion:
    text: str
    data: Any | None  # parsed JSON (dict/list) or None when the text is not JSON
    usage: Usage = field(default_factory=Usage)
    model: str = ""


@runtime_checkable
class Model(Protocol):
    """A chat model that can be asked for JSON matching a schema."""

    name: str
    context_tokens: int  # the model's context window, in tokens

    async def complete(
        self,
        messages: list[dict[str, str]],
        schema: dict[str, Any] | None,
        limits: Limits,
        schema_name: str = "result",
    ) -> Completion:
        """One isolated call. Raises ModelCallError (transient errors already retried)
        or ModelUnreachable (nothing answers at the configured address)."""
        ...

    def count_tokens(self, text: str) -> int:
        """Token estimate: the model's tokenizer where local, else a chars-per-token ratio."""
        ...

    async def aclose(self) -> None: ...
