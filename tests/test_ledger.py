"""The one coverage ledger: what `complete` means and when a command exits 3.

The rule is pinned here once, on the ledger itself, then checked end to end on all three
commands (ask, audit, mine) through the CLI against the real fake server.
"""

from __future__ import annotations

import json

import anyio
import pytest
from typer.testing import CliRunner

from tests import repo_responders as R
from rlm.cli import app
from rlm.engine.budget import Budget
from rlm.engine.mapper import map_items
from rlm.errors import ModelCallError
from rlm.fixtures.repo import write_repo
from rlm.engine import ledger
from rlm.engine.ledger import Ledger, Unit
from rlm.engine.outcomes import Status


def _ledger(**kw) -> Ledger:
    led = Ledger(bytes_total=1000, lines_total=100, **kw)
    led.planned(2)
    led.read(50, 500)
    return led


def test_everything_read_is_complete_and_exits_0():
    led = _ledger()
    led.read(50, 500)
    cov = ledger.close(led.cov, ["Coverage: all of it."])
    assert cov.complete and cov.statement.endswith("Complete.")
    assert ledger.exit_code(cov) == 0


@pytest.mark.parametrize("status,words", [(Status.FAILED, "failed and was not read"),
                                          (Status.NOT_RUN, "was not run"),
                                          (Status.INTERRUPTED, "was interrupted")])
def test_a_unit_that_did_not_end_ok_makes_it_incomplete_and_exits_3(status, words):
    led = _ledger()
    led.failed(Unit("c0002", "big.log", 51, 100), status, "the human reason")
    cov = ledger.close(led.cov, [], what="the answer")
    assert not cov.complete and ledger.exit_code(cov) == 3
    [f] = cov.chunks_failed
    assert (f.chunk, f.path, f.line_start, f.line_end, f.status) == (
        "c0002", "big.log", 51, 100, status.value)
    assert f"1 chunk {words}" in cov.statement and "c0002 big.log:51-100 (the human reason)" \
        in cov.statement
    assert cov.statement.endswith("INCOMPLETE: the answer may miss what was not read.")


def test_gaps_interrupts_and_unread_skips_are_incomplete_binaries_are_not():
    led = _ledger(skipped=[{"path": "logo.png", "reason": "binary", "incomplete": False}])
    led.read(50, 500)
    assert ledger.close(led.cov, []).complete  # a binary is left out by design
    led.cov.skipped.append({"path": "locked.txt", "reason": "unreadable", "incomplete": True})
    assert not ledger.close(led.cov, []).complete
    led = _ledger()
    led.read(50, 500)
    led.gap("3 file(s) were only scanned by code")
    cov = ledger.close(led.cov, [])
    assert not cov.complete and "Not covered: 3 file(s) were only scanned by code." in cov.statement
    led = _ledger()
    led.read(50, 500)
    led.interrupted()
    cov = ledger.close(led.cov, [])
    assert not cov.complete and "interrupted by Ctrl-C" in cov.statement
    assert ledger.exit_code(cov) == 3


def test_a_dry_run_is_never_complete_but_exits_0():
    cov = ledger.close(_ledger().cov, [], dry_run=True)
    assert not cov.complete and cov.statement.endswith("Dry run: nothing was read by the model.")
    assert ledger.exit_code(cov, dry_run=True) == 0


def test_the_mapper_types_every_outcome():
    """Failed calls, budget stops and interrupts are told apart by status, not by reason text."""

    async def go(budget, fail_on):
        async def work(i):
            if i == fail_on:
                raise ModelCallError("bad output")
            budget.usage.calls += 1
            return i

        return await map_items(range(4), work, key=str, concurrency=1, budget=budget)

    outs = anyio.run(go, Budget(max_calls=2), 0)
    assert [o.status for o in outs] == [Status.FAILED, Status.OK, Status.OK, Status.NOT_RUN]
    assert outs[0].reason == "bad output" and outs[1].error is None
    b = Budget()
    b.interrupted = True
    assert {o.status for o in anyio.run(go, b, -1)} == {Status.INTERRUPTED}


# ------------------------------------------------------------------------ all three commands

def _run(args):
    r = CliRunner().invoke(app, args + ["--json", "--quiet", "--no-cache"])
    return r.exit_code, json.loads(r.stdout) if r.stdout.strip().startswith("{") else r.output


def test_ask_audit_and_mine_exit_3_and_name_the_failed_range(fake_server, tmp_path):
    root = tmp_path / "repo"
    key = write_repo(root)
    fake_server.on("ModuleResult", R.good_module)
    fake_server.on("PickResult", R.good_pick)
    fake_server.on("RiskPickResult", R.good_risk_pick)
    fake_server.on("MapResult", lambda req, text: {"findings": []})
    fake_server.on("AnswerResult", lambda req, text: {"answer": "Nothing was found.", "cites": []})
    fake_server.fault("parcelpost/net/client.py", "500")  # every call showing it fails
    common = ["--model", "fake", "--base-url", fake_server.url, "--max-calls", "400"]
    runs = {
        "ask": ["ask", str(root), "what does the client do?", "--strategy", "fanout"],
        "audit": ["audit", str(root), "--max-rounds", "1"],
        "mine": ["mine", str(root), key["facts"][0]["question"]],
    }
    for name, args in runs.items():
        code, rep = _run(args + common)
        assert code == 3, (name, rep)
        cov = rep["coverage"]
        assert not cov["complete"] and "INCOMPLETE" in cov["statement"], name
        failed = [c for c in cov["chunks_failed"] if "client.py" in c["path"]
                  or "net" in c["path"]]
        assert failed, (name, cov["chunks_failed"])
        for c in cov["chunks_failed"]:  # the same shape for every command
            assert set(c) >= {"chunk", "path", "line_start", "line_end", "reason", "status"}
            assert c["status"] in ("failed", "not_run", "interrupted")
            assert c["chunk"] in cov["statement"]
        assert set(rep["evidence"]) == {"verified", "corrected", "rejected"}, name
