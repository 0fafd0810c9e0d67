"""The strategy a run reports is the one that ran, everywhere: the report (--json), the gate
event, the run record and `rlm runs`. A counting question answered by code is `count`, one
answered by typed records is `aggregate`; an audit with no model is `code_only`."""

from __future__ import annotations

import json
import os
import re
import sys

import pytest

from fixtures.repo import write_repo
from rlm.fixtures.log import write_log
from rlm.store.runs import RunStore
from rlm.testing.cli import run_cli



def rlm(*args, timeout=120):
    env = {k: v for k, v in os.environ.items() if k not in ("RLM_MODEL", "RLM_BASE_URL")}
    return run_cli(*args, env=env)


def recorded(run_id: str) -> tuple[dict, list[str], dict]:
    """The run record's row, its gate events' strategies and `rlm runs --json`'s entry."""
    store = RunStore()
    try:
        row = store.get(run_id)
        gates = [e["data"]["strategy"] for e in store.events(run_id, "gate")]
    finally:
        store.close()
    r = rlm("runs", "--json")
    assert r.returncode == 0, r.stderr
    listed = next(x for x in json.loads(r.stdout) if x["id"] == run_id)
    return row, gates, listed


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    p = tmp_path_factory.mktemp("names") / "app.log"
    write_log(p, lines=3000)
    return p


@pytest.mark.parametrize("question", ["how many errors?", "how many panics per component?",
                                      "most common errors?"])
def test_count_questions_report_the_count_strategy(log, question):
    r = rlm("ask", str(log), question, "--json", "--model", "none")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["strategy"] == "count" and rep["usage"]["calls"] == 0
    assert "were counted by code" in rep["coverage"]["statement"]
    row, gates, listed = recorded(rep["run_id"])
    assert row["strategy"] == "count" and gates == ["count"] and listed["strategy"] == "count"


def test_a_question_that_is_not_counting_keeps_the_gate_strategy(log):
    r = rlm("ask", str(log), "anomalies?", "--json", "--model", "none")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["strategy"] == "profile"
    row, gates, _ = recorded(rep["run_id"])
    assert row["strategy"] == "profile" and gates == ["profile"]


def test_code_only_audit_is_not_called_a_fanout(tmp_path):
    root = tmp_path / "repo"
    write_repo(root)
    r = rlm("audit", str(root), "--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["usage"]["calls"] == 0 and rep["strategy"] == "code_only"
    row, gates, listed = recorded(rep["run_id"])
    assert row["strategy"] == "code_only" and listed["strategy"] == "code_only"
    assert gates == ["code_only"]


def test_records_counting_reports_the_aggregate_strategy(tmp_path):
    import anyio

    from evals.sim.key import SimKey
    from evals.sim.server import start_sim
    from fixtures.oolong import write_oolong
    from rlm.api import AskOptions, ask_async
    from rlm.models.openai_compat import OpenAICompatModel, reset_mode_cache

    p = tmp_path / "records.txt"
    truth = write_oolong(p, records=120, seed=5)
    q = next(iter(truth["questions"]))
    seen: list[str] = []

    async def go():
        server, _ = start_sim("oracle", SimKey.from_json(truth["sim_key"]), seed=2)
        reset_mode_cache()
        model = OpenAICompatModel("sim", server.url, context_tokens=8192, timeout=5,
                                  max_attempts=2, backoff_base=0.01)
        try:
            return await ask_async(str(p), q, AskOptions(concurrency=2), model=model,
                                   on_event=lambda kind, data: seen.append(data["strategy"])
                                   if kind == "gate" else None)
        finally:
            await model.aclose()
            server.stop()

    rep = anyio.run(go)
    assert rep.strategy == "aggregate" and rep.aggregate is not None
    assert seen == ["aggregate"]
    # it names the size strategy it replaced
    assert any(re.search(r"counting question \((direct|fanout|grep) path replaced\)", r)
               for r in rep.gate.reasons), rep.gate.reasons
    row, gates, _ = recorded(rep.run_id)
    assert row["strategy"] == "aggregate" and gates == ["aggregate"]


def test_a_direct_read_the_server_refuses_is_recorded_as_the_fanout_it_became(tmp_path,
                                                                             fake_server):
    """The gate picks a direct read (the model declares a big context); the server refuses the
    whole file as too long (ContextTooLong, a typed outcome, not a reason string), so the file
    is read as a fan-out: a second gate event, the report and the run record say fanout."""
    import anyio

    from rlm.testing import Reply, default_responder, prompt_text
    from rlm.api import AskOptions, ask_async
    from rlm.models.openai_compat import OpenAICompatModel, reset_mode_cache

    p = tmp_path / "notes.txt"
    p.write_text("".join(f"note {i}: the weather on the coast is fine today\n"
                         for i in range(1, 300)))

    def strict(req, text):
        if len(prompt_text(req)) > 6000:  # the server's real context is small
            return Reply(status=400, body={"error": {
                "message": "This model's maximum context length is 2048 tokens.",
                "type": "invalid_request_error", "code": "context_length_exceeded"}})
        return default_responder(req, text)

    fake_server.default = strict
    reset_mode_cache()
    model = OpenAICompatModel("big", fake_server.url, context_tokens=32768, timeout=5.0,
                              max_attempts=2, backoff_base=0.01)
    gates: list[str] = []
    rep = anyio.run(lambda: ask_async(str(p), "what is said about the weather?", AskOptions(),
                                      model=model, on_event=lambda kind, data: gates.append(
                                          data["strategy"]) if kind == "gate" else None))
    assert gates == ["direct", "fanout"] and rep.strategy == "fanout"
    assert any("not one call after all" in r for r in rep.gate.reasons)
    assert not rep.coverage.chunks_failed and rep.coverage.lines_read_by_model == 299
    row, recorded_gates, _ = recorded(rep.run_id)
    assert row["strategy"] == "fanout" and recorded_gates == ["direct", "fanout"]


@pytest.mark.parametrize("command", ["audit", "mine"])
def test_sub_model_and_redact_report_mean_the_same_on_audit_and_mine(tmp_path, fake_server,
                                                                     command):
    """--sub-model takes the sub-calls of audit and mine as it does ask's map calls, and
    --redact-report masks their report like ask's."""
    from tests import repo_responders as R

    root = tmp_path / "repo"
    write_repo(root)
    fake_server.on("ModuleResult", R.good_module)
    fake_server.on("PickResult", R.keyword_pick if command == "mine" else R.good_pick)
    fake_server.on("RiskPickResult", R.good_risk_pick)
    args = ["What is the default timeout?"] if command == "mine" else ["--max-rounds", "2"]
    r = rlm(command, str(root), *args, "--base-url", fake_server.url, "--model", "big-one",
            "--sub-model", "small-one", "--redact-report", "--json")
    assert r.returncode in (0, 3), r.stderr
    rep = json.loads(r.stdout)
    models = {q["body"]["model"] for q in fake_server.requests}
    assert fake_server.requests and models == {"small-one"}, models
    assert rep["redaction"]["report_masked"]
    row, gates, _ = recorded(rep["run_id"])
    assert row["options"]["sub_model"] == "small-one"
    want = "scoped" if command == "mine" else "fanout"
    assert rep["strategy"] == row["strategy"] == want and gates == [want]
