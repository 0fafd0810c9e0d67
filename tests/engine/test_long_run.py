"""Warn before long runs: the numbers and how to cap them, up front; stop when told to."""

from __future__ import annotations

import anyio
import pytest

from rlm.api import AskOptions, ask_async
from rlm.errors import UsageError
from rlm.models.openai_compat import OpenAICompatModel, reset_mode_cache
from rlm.testing import run_cli


def _prose(tmp_path, n=8000):
    p = tmp_path / "prose.txt"
    p.write_text("".join(f"Line {i} of ordinary prose about the weather and lunch plans.\n"
                         for i in range(1, n + 1)))
    return p


def test_a_long_run_stops_before_any_call_when_declined(tmp_path, fake_server):
    p = _prose(tmp_path)
    asked: list[str] = []
    reset_mode_cache()
    model = OpenAICompatModel("small", fake_server.url, context_tokens=1024, timeout=5.0)
    opts = AskOptions(strategy="fanout", confirm=lambda msg: asked.append(msg) or False)
    with pytest.raises(BaseException) as ei:  # the session's task group may wrap it
        anyio.run(lambda: ask_async(str(p), "what is said?", opts, model=model))
    err = ei.value
    while isinstance(err, BaseExceptionGroup):
        err = err.exceptions[0]
    assert isinstance(err, UsageError) and "stopped before any model call" in str(err)
    assert fake_server.requests == []
    [msg] = asked
    assert "model calls" in msg and "--max-calls" in msg and "--strategy" in msg


def test_a_capped_run_is_not_long(tmp_path, fake_server):
    p = _prose(tmp_path, n=3000)
    reset_mode_cache()
    model = OpenAICompatModel("small", fake_server.url, context_tokens=1024, timeout=5.0)
    opts = AskOptions(strategy="fanout", max_calls=20, confirm=lambda msg: False)
    rep = anyio.run(lambda: ask_async(str(p), "what is said?", opts, model=model))
    assert 0 < len(fake_server.requests) <= 20
    assert not any("a long run" in r for r in rep.gate.reasons)


def test_not_on_a_terminal_the_warning_is_printed_and_the_run_goes_on(tmp_path, fake_server):
    p = _prose(tmp_path, n=150_000)  # ~9 MB: over 200 chunks of an 8k-token model
    r = run_cli("ask", str(p), "what is said?", "--base-url", fake_server.url, "--model", "m",
                "--strategy", "fanout", "--concurrency", "16", "--json")
    assert r.returncode == 0, r.stderr[-500:]
    warn = [x for x in r.stderr.splitlines() if "a long run" in x]
    assert warn and "--max-calls" in warn[0]
    assert len(fake_server.requests) > 200
