"""The ways `rlm ask` answers (see rlm.pipeline.gate for how one is chosen).

The gate picks one of the four size strategies (direct, grep, profile, fanout); a counting
question then takes a counting strategy in their place (:func:`route`): ``count`` (code counts
the matching lines of a log: rlm.pipeline.strategies.counting) or ``aggregate`` (a model turns chunks
into typed records, code checks and counts them: rlm.pipeline.aggregate_map). The name that runs is
the name the gate event, the report and the run record carry.

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


def route(ctx) -> str:
    """The final strategy name: a counting question leaves the gate's size strategy for
    ``count`` or ``aggregate`` (each module's ``applies`` says when; --strategy keeps the
    forced one). The decision records what it replaced (``Decision.replaced``)."""
    dec = ctx.decision
    for name in ("count", "aggregate"):
        if import_module(MODULES[name]).applies(ctx):
            dec.replaced, dec.strategy = dec.strategy, name
            break
    return dec.strategy


async def run(name: str, ctx):
    """Run the strategy ``name`` (one of ALL_STRATEGIES) and return its Result."""
    if name not in MODULES:
        raise ValueError(f"unknown strategy {name!r}")
    return await import_module(MODULES[name]).run(ctx)
