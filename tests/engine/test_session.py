"""The Session (rlm.engine.session): the model server is checked before the corpus is opened, a
run is recorded with its events and how it ended, a dry run records nothing, and the budget is
one for the whole run. Against the real fake server on 127.0.0.1."""

from __future__ import annotations

import anyio
import pytest

from rlm.engine.events import Plan
from rlm.engine.options import RunOptions
from rlm.engine.session import Session
from rlm.errors import ModelUnreachable
from rlm.store.runs import run_history


def opts(url: str, **kw) -> RunOptions:
    return RunOptions(model="m", base_url=url, redact=False, **kw)


async def _block(o: RunOptions, body, prepared: list):
    async def prepare():
        prepared.append(True)

    async with Session.open(o, path="corpus.log", question="anomalies?", prepare=prepare) as s:
        return await body(s)


def test_a_dead_server_is_found_before_the_corpus_is_opened():
    prepared: list = []

    async def body(s):
        raise AssertionError("the block must not run")

    with pytest.raises(ModelUnreachable):
        anyio.run(_block, opts("http://127.0.0.1:9/v1"), body, prepared)
    assert prepared == []  # the corpus was never opened
    assert run_history().list() == []  # nor a run recorded


def test_a_run_that_raises_is_recorded_with_its_error_and_events(fake_server):
    prepared: list = []

    async def body(s):
        s.emit(Plan(total=3, concurrency=2))
        assert s.sub is not None and s.budget.max_calls == 7
        raise RuntimeError("the strategy broke")

    with pytest.raises(Exception) as raised:  # as itself, or in the task group's ExceptionGroup
        anyio.run(_block, opts(fake_server.url, max_calls=7), body, prepared)
    assert "the strategy broke" in repr(raised.value.exceptions if isinstance(
        raised.value, BaseExceptionGroup) else raised.value)
    assert prepared == [True]
    [run] = run_history().list()
    assert run["status"] == "error" and run["error"] == "RuntimeError: the strategy broke"
    assert run["question"] == "anomalies?"
    plans = run_history().events(run["id"], "plan")
    assert [e["data"]["total"] for e in plans] == [3]


def test_a_dry_run_records_nothing_and_calls_no_server():
    async def body(s):
        return s.run_id

    run_id = anyio.run(_block, opts("http://127.0.0.1:9/v1", dry_run=True), body, [])
    assert run_id and run_history().list() == []
