"""A `Model` behind the call cache (rlm.store.CallCache).

Same protocol as the model it wraps. A hit returns the stored reply with ``usage.calls = 0``,
``usage.cached_calls = 1`` and zero tokens: cache hits never count in token totals. A miss calls
the inner model and stores the reply when it parsed as JSON; the caller deletes it again with
``forget(completion)`` when the JSON is then rejected by the schema (see rlm.engine.call), so
garbage is never replayed. The key holds the model name, never the API key, and the base URL
(without credentials) only for the anonymous model "default".
"""

from __future__ import annotations

import sqlite3
from typing import Any

from rlm.models.base import Completion, Limits, Model, Usage


class CachedModel:
    def __init__(self, inner: Model, cache, read: bool = True):
        self.inner = inner
        self.cache = cache
        self.read = read  # False (--no-cache): fresh calls, answers still stored for --resume
        self.name = inner.name
        self.context_tokens = inner.context_tokens
        self.hits = self.misses = 0
        self._broken = False
        # the key names the model, not where it is served; "default" (no --model: whatever the
        # server serves) is only known by its address, so there the address is part of the key
        self._key_name = inner.name
        if inner.name == "default" and getattr(inner, "base_url", None):
            from rlm.models.urls import redact_url

            self._key_name = f"default@{redact_url(inner.base_url)}"

    def __getattr__(self, attr: str) -> Any:  # base_url, confirmed_mode, describe, ...
        return getattr(self.inner, attr)

    def __repr__(self) -> str:
        return f"CachedModel({self.inner!r})"

    def key(self, messages: list[dict], schema: dict | None, limits: Limits, schema_name: str) -> str:
        return self.cache.key(self._key_name, messages, schema, schema_name, limits.max_tokens,
                              limits.temperature)

    async def complete(self, messages: list[dict[str, str]], schema: dict[str, Any] | None,
                       limits: Limits, schema_name: str = "result") -> Completion:
        limits = limits or Limits()
        key = None if self._broken else self.key(messages, schema, limits, schema_name)
        if key is not None and self.read:
            try:
                hit = self.cache.get(key)
            except sqlite3.Error:
                hit, self._broken = None, True
            if hit is not None:
                text, data, _pt, _ct = hit
                self.hits += 1
                comp = Completion(text=text, data=data, usage=Usage(cached_calls=1), model=self.name)
                comp.cache_key = key  # type: ignore[attr-defined]
                return comp
        comp = await self.inner.complete(messages, schema, limits, schema_name=schema_name)
        self.misses += 1
        if key is not None and comp.data is not None:
            try:
                if self.cache.put(key, self.name, comp.text, comp.data, comp.usage.prompt_tokens,
                                  comp.usage.completion_tokens):
                    comp.cache_key = key  # type: ignore[attr-defined]
            except sqlite3.Error:
                self._broken = True
        return comp

    def forget(self, comp: Completion) -> None:
        """The caller rejected this reply: make sure it is never served from the cache."""
        key = getattr(comp, "cache_key", None)
        if key is not None and not self._broken:
            try:
                self.cache.delete(key)
            except sqlite3.Error:
                self._broken = True

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    async def aclose(self) -> None:
        try:
            await self.inner.aclose()
        finally:
            try:
                self.cache.close()
            except sqlite3.Error:
                pass
