"""``--model sim:KIND[?key=PATH&seed=N&context=TOKENS&rate.NAME=R]``: a simulated reader served
on 127.0.0.1 and reached through rlm's own OpenAI-compatible client.

rlm/models/registry.py loads this module through the ``rlm.models`` entry point ``sim`` (declared in
pyproject.toml) only when a spec starts with ``sim:`` (it lives in the
source checkout's evals/ folder; nothing under rlm/ imports it otherwise). The key is an answer
key written by a fixture generator (``*.truth.json``) or a simulator key; RLM_SIM_KEY names one
when the spec does not.
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import parse_qsl

from rlm.errors import UsageError

_SERVERS: dict[str, Any] = {}  # spec -> (server, reader): one per spec and process
DEFAULT_CONTEXT = 8192


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    body = spec[len("sim:"):]
    kind, _, query = body.partition("?")
    return kind.strip(), dict(parse_qsl(query))


def make_model(spec: str, timeout: float = 120.0, **kw: Any):
    from evals.sim.key import load
    from evals.sim.server import start_sim
    from rlm.models.openai_compat import OpenAICompatModel

    kind, opts = parse_spec(spec)
    if kind not in ("oracle", "noisy", "adversarial"):
        raise UsageError(f"unknown simulated reader {kind!r}: sim:oracle, sim:noisy or sim:adversarial")
    key_path = opts.get("key") or os.environ.get("RLM_SIM_KEY")
    if not key_path and kind != "adversarial":
        raise UsageError(f"model '{spec}' reads an answer key: add ?key=PATH.truth.json "
                         "(or set RLM_SIM_KEY)")
    try:
        key = load(key_path) if key_path else None
    except (OSError, ValueError, KeyError) as e:
        raise UsageError(f"cannot read the simulator key {key_path!r}: {e}") from None
    try:
        rates = {k[5:]: float(v) for k, v in opts.items() if k.startswith("rate.")}
        seed = int(opts.get("seed", 0))
        ctx = int(opts.get("context", DEFAULT_CONTEXT))
    except ValueError as e:
        raise UsageError(f"bad option in model spec {spec!r}: {e}") from None
    if spec not in _SERVERS:
        _SERVERS[spec] = start_sim(kind, key, seed=seed, rates=rates)
    server, _reader = _SERVERS[spec]
    kw.setdefault("context_tokens", ctx)
    kw.setdefault("backoff_base", 0.01)
    return OpenAICompatModel(f"sim:{kind}", server.url, timeout=timeout, **kw)


def reader_for(spec: str):
    """The Reader behind a spec resolved in this process (its log of injected damage)."""
    return _SERVERS[spec][1] if spec in _SERVERS else None
