"""From a model spec string (and environment) to a `Model`.

Specs:
- ``local`` — the embedded llama.cpp model; also the default when nothing is configured.
- ``openai:NAME`` — OpenAI (or anything at OPENAI_BASE_URL); key from OPENAI_API_KEY.
- ``NAME`` with a base URL — any OpenAI-compatible server (vLLM, llama.cpp server, Ollama).
- no spec but a base URL — the server's model, named ``default``.
- ``sim:oracle|noisy|adversarial`` — a simulated reader (evals/sim/, source checkout only).

Explicit arguments win over the environment: RLM_MODEL, RLM_BASE_URL, RLM_API_KEY.
"""

from __future__ import annotations

import os
from typing import Any

from rlm.errors import UsageError
from rlm.models.base import Model

OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"
OPENAI_CONTEXT_TOKENS = 128_000


def _env(name: str) -> str | None:
    v = os.environ.get(name)
    return v.strip() if v and v.strip() else None


def _check_url(url: str) -> str:
    u = url.strip()
    if not (u.startswith("http://") or u.startswith("https://")) or len(u) <= len("https://"):
        from rlm.models.openai_compat import redact_url

        raise UsageError(f"invalid base URL {redact_url(u)!r}: expected http://HOST:PORT/v1 or https://…")
    return u


def resolve_model(
    spec: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    timeout: float = 120.0,
    **kw: Any,
) -> Model:
    """Build the model named by ``spec`` (or RLM_MODEL). ``kw`` goes to OpenAICompatModel
    (context_tokens, max_attempts, backoff_base, chars_per_token, transport); for the local
    model only ``context_tokens`` is passed on."""
    spec = (spec or "").strip() or _env("RLM_MODEL")
    explicit_url = (base_url or "").strip() or None
    url = explicit_url or _env("RLM_BASE_URL")
    key = api_key or _env("RLM_API_KEY")

    if (spec is None and url is None) or spec == "local":
        from rlm.models.local import LocalModel  # lazy: imports llama.cpp machinery

        local_kw = {k: kw[k] for k in ("context_tokens",) if k in kw}
        return LocalModel(**local_kw)

    if spec is not None and spec.startswith("sim:"):
        return _simulated(spec, timeout, kw)

    from rlm.models.openai_compat import OpenAICompatModel

    if spec is not None and spec.startswith("openai:"):
        name = spec[len("openai:"):].strip()
        if not name:
            raise UsageError("model spec 'openai:' needs a model name, e.g. openai:gpt-4o-mini")
        o_url = explicit_url or _env("OPENAI_BASE_URL") or OPENAI_DEFAULT_BASE_URL
        o_key = api_key or _env("OPENAI_API_KEY") or _env("RLM_API_KEY")
        if not o_key and o_url.rstrip("/") == OPENAI_DEFAULT_BASE_URL:
            raise UsageError(f"model '{spec}' needs OPENAI_API_KEY")
        kw.setdefault("context_tokens", OPENAI_CONTEXT_TOKENS)
        return OpenAICompatModel(name, _check_url(o_url), api_key=o_key, timeout=timeout, **kw)

    if spec is None:  # only a base URL: whatever the server serves
        return OpenAICompatModel("default", _check_url(url), api_key=key, timeout=timeout, **kw)

    if url is None:
        raise UsageError(f"model '{spec}' needs --base-url or RLM_BASE_URL")
    return OpenAICompatModel(spec, _check_url(url), api_key=key, timeout=timeout, **kw)


def _simulated(spec: str, timeout: float, kw: dict) -> Model:
    """``sim:KIND``: a simulated reader for measurements. It lives in the evals/ folder of the
    source checkout and is imported only here, only for this spec."""
    import importlib
    import sys
    from pathlib import Path

    checkout = str(Path(__file__).resolve().parent.parent.parent)
    if not (Path(checkout) / "evals" / "sim" / "plugin.py").is_file():
        raise UsageError(f"model '{spec}' is a simulated reader from rlm's source checkout "
                         "(evals/sim/); this installation has none")
    if checkout not in sys.path:
        sys.path.append(checkout)
    return importlib.import_module("evals.sim.plugin").make_model(spec, timeout=timeout, **kw)


def describe(model: Any) -> str:
    """One line about a model for logs and reports; never contains secrets."""
    d = getattr(model, "describe", None)
    if callable(d):
        try:
            return str(d())
        except Exception:  # noqa: BLE001 - a description must never fail a run
            pass
    name = getattr(model, "name", type(model).__name__)
    ctx = getattr(model, "context_tokens", None)
    return f"{name} (context {ctx} tokens)" if ctx else str(name)
