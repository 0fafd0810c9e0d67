"""A simulated reader behind rlm.testing's fake server: a real OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

from evals.sim.key import SimKey
from evals.sim.readers import Reader

from rlm.testing import FakeServer


def start_sim(kind: str, key: SimKey | None, seed: int = 0, rates: dict | None = None,
              slow_s: float = 0.3) -> tuple[FakeServer, Reader]:
    """Start a server whose every answer comes from a `Reader`; returns (server, reader)."""
    reader = Reader(kind, key, seed=seed, rates=rates, slow_s=slow_s)
    server = FakeServer(model_name=f"sim-{kind}").start()
    server.default = reader
    return server, reader
