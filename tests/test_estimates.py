"""Honest estimates: speed measured on this machine, the 3x overrun signal, per-call time limit
and degenerate generation cut early (the llama.cpp object is a stand-in for the third-party
library; our streaming loop runs for real)."""

from __future__ import annotations

import itertools
import time

import pytest

from rlm.errors import ModelCallError
from rlm.engine.estimate import fill_seconds, overrun
from rlm.models.base import Limits
from rlm.models.degenerate import repeating_tail
from rlm.models.speed import SpeedMeter, load, speed_path
from rlm.render.progress import Progress
from rlm.schemas.report import Estimate


def test_repeating_tail():
    assert repeating_tail('{"summary": "nice_nice_nice_nice_nice_nice_nice_nice_nice_nice_') == "nice_" or \
        repeating_tail('{"summary": "nice_nice_nice_nice_nice_nice_nice_nice_nice_nice_') == "_nice"
    assert repeating_tail('{"answer": "2023-03-22 12:22:52.281999.000000.000000.000000.000000.000000.000000.000000') is not None
    assert repeating_tail('{"answer": "the disk /dev/sda1 was full at 12:00", "cites": [2]}') is None
    assert repeating_tail('{"a": 1,' + " " * 80) is None  # indentation is not degenerate
    assert repeating_tail("aaaa") is None  # too short to be sure


def test_speed_is_measured_stored_and_averaged():
    m = SpeedMeter("local:test-model")
    m.add(prompt_tokens=10, prompt_s=9.0, gen_tokens=5, gen_s=9.0)  # warm-up: not counted
    m.add(prompt_tokens=1000, prompt_s=2.0, gen_tokens=100, gen_s=5.0)
    s = m.save()
    assert (s.prompt_tps, s.gen_tps, s.gen_per_call) == (500.0, 20.0, 100.0)
    assert speed_path("local:test-model").is_file()
    m.add(prompt_tokens=1000, prompt_s=1.0, gen_tokens=100, gen_s=2.5)
    s2 = m.save()
    assert 500 < s2.prompt_tps < 1000 and s2.calls == 2  # a running average, not the last run
    assert load("local:test-model").gen_tps == pytest.approx(s2.gen_tps, abs=0.1)


def local_model(tmp_path, monkeypatch):
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF")
    monkeypatch.setenv("RLM_LOCAL_GGUF", str(gguf))
    from rlm.models.local import LocalModel  # imports llama_cpp lazily, only on load

    return LocalModel(gguf=gguf, timeout=30)


def test_local_estimate_uses_the_speed_measured_here(tmp_path, monkeypatch):
    m = local_model(tmp_path, monkeypatch)
    est = fill_seconds(m, Estimate(calls=2, prompt_tokens=1000))
    assert est.seconds == pytest.approx(1000 / 350 + 2 * 80 / 80, abs=0.1)
    assert est.basis.startswith("default (not measured")
    sm = SpeedMeter(m.name)
    sm.add(1, 1.0, 1, 1.0)  # warm-up
    sm.add(1000, 10.0, 100, 20.0)  # 100 prompt tok/s, 5 generated tok/s, 100 per call
    sm.save()
    m2 = local_model(tmp_path, monkeypatch)
    est2 = fill_seconds(m2, Estimate(calls=2, prompt_tokens=1000))
    assert est2.seconds == pytest.approx(10 + 2 * 100 / 5, abs=0.1)
    assert est2.basis.startswith("measured on this machine")


def test_progress_says_when_a_run_takes_3x_its_estimate():
    p = Progress(enabled=False)
    p.event("estimate", {"seconds": 0.02, "calls": 1})
    assert p.overrun_note() is None
    time.sleep(0.08)
    note = p.overrun_note()
    assert note and "x its estimate" in note
    assert overrun(10, 3) == "3.3x its estimate (~3 s)" and overrun(8, 3) is None and overrun(9, None) is None


class FakeLlama:
    """Stands in for llama_cpp.Llama's streaming chat completion."""

    def __init__(self, pieces, delay=0.0):
        self.pieces, self.delay, self.sent, self.closed = pieces, delay, 0, False
        self.n_tokens = 0

    def create_chat_completion(self, **kw):
        assert kw["stream"] is True

        def gen():
            try:
                for p in self.pieces():
                    time.sleep(self.delay)
                    self.sent += 1
                    yield {"choices": [{"delta": {"content": p}}]}
            finally:
                self.closed = True

        return gen()


def _forever(piece):
    def it():
        while True:
            yield piece

    return it


def test_degenerate_generation_is_cut_early(tmp_path, monkeypatch):
    m = local_model(tmp_path, monkeypatch)
    llm = FakeLlama(lambda: itertools.chain(['{"summary": "'], _forever("nice_")()))
    text, n, _, _, cut = m._stream(llm, [], Limits(max_tokens=512, timeout=30), {})
    assert cut == "degenerate" and llm.closed and n < 40 and "[cut by rlm" in text


def test_local_call_has_a_time_limit(tmp_path, monkeypatch):
    m = local_model(tmp_path, monkeypatch)
    words = iter(f"w{i} " for i in range(10_000))
    llm = FakeLlama(lambda: words, delay=0.01)
    t = time.monotonic()
    text, n, _, _, cut = m._stream(llm, [], Limits(max_tokens=512, timeout=0.2), {})
    assert cut == "time" and llm.closed and time.monotonic() - t < 1.0 and n < 60
