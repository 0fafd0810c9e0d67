"""A simulated reader behind tests/fake_server.py: a real OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import sys
from pathlib import Path

from evals.sim.key import SimKey
from evals.sim.readers import Reader

ROOT = Path(__file__).resolve().parent.parent.parent
if str(ROOT / "tests") not in sys.path:
    sys.path.insert(0, str(ROOT / "tests"))

from fake_server import FakeServer  # noqa: E402


def start_sim(kind: str, key: SimKey | None, seed: int = 0, rates: dict | None = None,
              slow_s: float = 0.3) -> tuple[FakeServer, Reader]:
    """Start a server whose every answer comes from a `Reader`; returns (server, reader)."""
    reader = Reader(kind, key, seed=seed, rates=rates, slow_s=slow_s)
    server = FakeServer(model_name=f"sim-{kind}").start()
    server.default = reader
    return server, reader
