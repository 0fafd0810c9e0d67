"""The four ways `rlm ask` answers (see rlm.strategies.gate for how one is chosen).

Each strategy is a module with ``async def run(ctx: Context) -> Result``: it gets the gate's
final decision and the session (models, budget, events) in ``ctx`` and returns its plan (the
estimate and what code found while planning), its outcomes (the coverage ledger, findings,
groups) and the parts of the answer; it edits no shared state.
"""

from __future__ import annotations

from importlib import import_module

from rlm.strategies.gate import STRATEGIES


async def run(name: str, ctx):
    """Run the strategy ``name`` (one of STRATEGIES) and return its Result."""
    if name not in STRATEGIES:
        raise ValueError(f"unknown strategy {name!r}")
    return await import_module(f"rlm.strategies.{name}").run(ctx)
