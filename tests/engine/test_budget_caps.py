"""Budgets are hard caps: --max-calls / --max-tokens are never exceeded, retries included.

Counted at the real fake HTTP server, with retries forced by injected faults."""

from __future__ import annotations

import anyio

from rlm.api import AskOptions, ask_async
from rlm.models.openai_compat import OpenAICompatModel, reset_mode_cache


def _prose(tmp_path, n=2000):
    p = tmp_path / "prose.txt"
    p.write_text("".join(f"Line {i} of ordinary prose about the weather and lunch plans.\n"
                         for i in range(1, n + 1)))
    return p


def _run(path, server, attempts=3, context_tokens=1024, **opts):
    reset_mode_cache()
    model = OpenAICompatModel("fake", server.url, context_tokens=context_tokens, timeout=5.0,
                              max_attempts=attempts, backoff_base=0.01)
    return anyio.run(lambda: ask_async(str(path), "what is said?", AskOptions(**opts),
                                       model=model))


def test_http_retries_never_pass_the_call_cap(tmp_path, fake_server):
    p = _prose(tmp_path)
    fake_server.fault("Line", "500")  # every map request fails: each chunk retries 3 times
    rep = _run(p, fake_server, max_calls=6, concurrency=1)
    assert len(fake_server.requests) <= 6
    assert rep.usage.calls == len(fake_server.requests)  # failed attempts are calls too
    assert not rep.coverage.complete
    not_run = [c for c in rep.coverage.chunks_failed if c.reason.startswith("not run")]
    assert len(not_run) == rep.coverage.chunks_total - 1  # the first chunk used the 6 calls
    # every chunk not run is named: consecutive ones as one range
    assert f"{not_run[0].chunk}-{not_run[-1].chunk} ({len(not_run)} chunks)" in rep.coverage.statement
    assert "not run: call budget of 6 spent" in rep.coverage.statement
    # and the answer says so first, with the chunks not read
    assert rep.answer.startswith(f"**Stopped by the budget** (call budget of 6 spent): "
                                 f"{rep.coverage.chunks_total} of {rep.coverage.chunks_total} "
                                 f"chunks were not read (c0001, {not_run[0].chunk}-")


def test_schema_retries_never_pass_the_call_cap(tmp_path, fake_server):
    p = _prose(tmp_path)
    fake_server.fault("Line", "schema")  # valid JSON, wrong shape: call_json retries
    _run(p, fake_server, max_calls=5, concurrency=4)
    assert len(fake_server.requests) <= 5


def test_calls_in_flight_never_overshoot_the_cap(tmp_path, fake_server):
    p = _prose(tmp_path)
    fake_server.fault("Line", "slow", seconds=0.3)
    rep = _run(p, fake_server, max_calls=3, concurrency=8)
    assert rep.coverage.chunks_total > 8
    assert len(fake_server.requests) <= 3
    assert rep.usage.calls <= 3


def test_token_cap_holds_with_retries(tmp_path, fake_server):
    p = _prose(tmp_path)
    fake_server.fault("Line", "schema")
    rep = _run(p, fake_server, max_tokens=3000, concurrency=4)
    assert rep.usage.prompt_tokens + rep.usage.completion_tokens <= 3000
    assert len(fake_server.requests) >= 1


def test_wall_time_cap_holds_while_requests_hang(tmp_path, fake_server):
    """Requests that would take 5 s each: the time budget of 1 s bounds them (their timeout is
    what is left of it), and no request starts after it."""
    p = _prose(tmp_path)
    fake_server.fault("Line", "slow", seconds=5)
    rep = _run(p, fake_server, attempts=1, max_wall_s=1.0, concurrency=2)
    assert rep.usage.wall_s < 4.5  # not 5 s per request, nor per chunk
    assert "time budget of 1s" in rep.coverage.statement and not rep.coverage.complete
    starts = sorted(r["t"] for r in fake_server.requests)
    assert starts[-1] - starts[0] <= 1.5
