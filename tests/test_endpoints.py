"""Several endpoints (replicas of one model): least-in-flight spreading, failover, usage per
endpoint. Two real fake HTTP servers; one is killed in the middle of a fan-out."""

from __future__ import annotations

import threading
import time

import anyio

from rlm.testing import FakeServer, Reply
from rlm.api import AskOptions, ask_async
from rlm.models.endpoints import EndpointPool
from rlm.models.openai_compat import reset_mode_cache
from rlm.models.registry import resolve_model


def planted(tmp_path, n=3000):
    lines = [f"Paragraph {i} talks about routine matters and nothing else at all." for i in range(n)]
    lines[min(2345, n - 1)] = "The committee approved the PLANNED change to the schedule."
    p = tmp_path / "prose.txt"
    p.write_text("\n".join(lines) + "\n")
    return p


def mapper(delay: float):
    import re

    def fn(req, text):
        found = [{"line": int(m.group(1)), "claim": "the committee approved a planned change",
                  "quote": "PLANNED"}
                 for m in re.finditer(r"^(\d+)\| (.*PLANNED.*)$", text, re.M)]
        return Reply(content=__import__("json").dumps({"findings": found}), delay=delay)

    return fn


def serve(delay: float) -> FakeServer:
    s = FakeServer().start()
    s.on("MapResult", mapper(delay))
    s.on("AnswerResult", lambda r, t: {"answer": "The committee approved a change.", "cites": [1]})
    return s


def pool(*servers) -> EndpointPool:
    reset_mode_cache()
    m = resolve_model("fake", base_url=",".join(s.url for s in servers), context_tokens=2048,
                      timeout=5.0, max_attempts=3, backoff_base=0.01)
    assert isinstance(m, EndpointPool) and len(m.members) == len(servers)
    return m


def test_calls_spread_to_the_least_busy_endpoint(tmp_path):
    a, b = serve(0.05), serve(0.05)
    try:
        p = planted(tmp_path)
        rep = anyio.run(lambda: ask_async(str(p), "what did the committee do?",
                                          AskOptions(concurrency=4), model=pool(a, b)))
        assert rep.coverage.complete and rep.coverage.chunks_total > 10
        ends = {e["url"]: e for e in rep.usage.endpoints}
        ca, cb = ends[a.url]["calls"], ends[b.url]["calls"]
        assert ca + cb == rep.usage.calls and ends[a.url]["failures"] == 0 == ends[b.url]["failures"]
        assert min(ca, cb) >= 0.4 * (ca + cb), (ca, cb)  # equal servers share the work
    finally:
        a.stop()
        b.stop()


def test_an_endpoint_killed_mid_run_loses_nothing(tmp_path):
    a, b = serve(0.03), serve(0.03)
    killed = threading.Event()

    def killer():
        while len(a.requests) < 5:
            time.sleep(0.01)
        a.stop()
        killed.set()

    t = threading.Thread(target=killer, daemon=True)
    t.start()
    try:
        p = planted(tmp_path)
        rep = anyio.run(lambda: ask_async(str(p), "what did the committee do?",
                                          AskOptions(concurrency=4), model=pool(a, b)))
        assert killed.is_set()
        cov = rep.coverage
        assert cov.complete and not cov.chunks_failed and cov.chunks_ok == cov.chunks_total > 10
        assert [(f.source.line_start, f.verified) for f in rep.findings] == [(2346, True)]
        ends = {e["url"]: e for e in rep.usage.endpoints}
        assert ends[a.url]["calls"] >= 3 and ends[a.url]["failures"] >= 1
        assert ends[b.url]["calls"] > ends[a.url]["calls"]
        # usage.calls counts HTTP requests, the failed ones on the killed endpoint too
        answered = ends[a.url]["calls"] + ends[b.url]["calls"]
        assert answered < rep.usage.calls <= answered + 2 * ends[a.url]["failures"]
        assert "Endpoints:" in __import__("rlm.render", fromlist=["x"]).report_markdown(rep)
    finally:
        t.join(timeout=5)
        a.stop()
        b.stop()


def test_all_endpoints_down_fails_the_chunk_with_a_reason(tmp_path):
    a, b = serve(0.0), serve(0.0)
    a.fault("Paragraph", "500")
    b.fault("Paragraph", "500")
    try:
        p = planted(tmp_path, n=400)
        rep = anyio.run(lambda: ask_async(str(p), "what did the committee do?",
                                          AskOptions(concurrency=2), model=pool(a, b)))
        assert not rep.coverage.complete and rep.coverage.chunks_failed
        assert "failed on all 2 endpoints" in rep.coverage.chunks_failed[0].reason
    finally:
        a.stop()
        b.stop()
