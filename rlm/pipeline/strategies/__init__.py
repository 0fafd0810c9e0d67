"""The ways `rlm ask` answers (rlm.pipeline.gate decides which, once).

The gate picks one of the four size strategies (direct, grep, profile, fanout), or for a
counting question a counting strategy in their place: ``count`` (code counts the matching lines
of a log: rlm.pipeline.strategies.counting) or ``aggregate`` (a model turns chunks into typed
records, code checks and counts them: rlm.pipeline.aggregate_map). The name that runs is the
name the gate event, the report and the run record carry.

Each strategy is a module with ``async def run(ctx: Context) -> Result``: it gets the final
decision and the session (models, budget, events) in ``ctx`` and returns its plan (the
estimate and what code found while planning), its outcomes (the coverage ledger, findings,
groups) and the parts of the answer; it edits no shared state.
"""

from __future__ import annotations

from importlib import import_module

from rlm.pipeline.gate import ALL_STRATEGIES, STRATEGIES

MODULES = {**{s: f"rlm.pipeline.strategies.{s}" for s in STRATEGIES},
           "count": "rlm.pipeline.strategies.counting", "aggregate": "rlm.pipeline.aggregate_map"}
assert set(MODULES) == set(ALL_STRATEGIES)


async def run(name: str, ctx):
    """Run the strategy ``name`` (one of ALL_STRATEGIES) and return its Result."""
    if name not in MODULES:
        raise ValueError(f"unknown strategy {name!r}")
    return await import_module(MODULES[name]).run(ctx)
