"""Call cache and run records (rlm/store.py, rlm/models/cached.py) against the real fake server."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from rlm.api import AskOptions, ask
from rlm.engine.budget import Budget
from rlm.engine.call import call_json
from rlm.models.base import Limits
from rlm.models.cached import CachedModel
from rlm.models.openai_compat import OpenAICompatModel, reset_mode_cache
from rlm.render.progress import Progress
from rlm.schemas.calls import MapResult
from rlm.store import CallCache, RunStore, redact_argv
from rlm.testing.cli import run_cli

QUESTION = "which lines mention the gamma relay?"
EXCERPT = re.compile(r"Excerpt \(([^)]*)\)")


def write_corpus(path: Path, lines: int = 5000) -> Path:
    """~60 bytes a line: 5,000 lines make about a dozen fan-out chunks."""
    words = ["alpha", "beta", "gamma", "delta", "relay", "queue", "cache", "north", "south"]
    with path.open("w") as f:
        for i in range(1, lines + 1):
            f.write(f"L{i:06d} " + " ".join(words[(i * k) % len(words)] for k in (1, 3, 5, 7, 11))
                    + f" seq={i * 7919 % 100003}\n")
    return path


def map_responder(req: dict, text: str):
    """Cite the first line of the excerpt, quoting a few words of it (code checks the quote)."""
    m = re.search(r"^(\d+)\| (.*)$", text, re.MULTILINE)
    if not m:
        return {"findings": []}
    return {"findings": [{"line": int(m.group(1)), "claim": "the excerpt starts here",
                          "quote": m.group(2)[:20]}]}


def chunk_of(req: dict | str) -> str | None:
    """The chunk ("PATH:A-B") of a recorded request, or of a user message text."""
    m = EXCERPT.search(req if isinstance(req, str) else req["user_text"])
    return m.group(1) if m else None


def map_requests(server, since: int = 0) -> list[dict]:
    return [r for r in server.requests[since:] if r["schema_name"] == "MapResult"]


@pytest.fixture
def server(fake_server):
    reset_mode_cache()
    fake_server.on("MapResult", map_responder)
    fake_server.on("AnswerResult", lambda req, text: {"answer": "The excerpts start at their "
                                                                "first lines.", "cites": [1]})
    return fake_server


def cli_env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("RLM_MODEL", "RLM_BASE_URL", "RLM_API_KEY", "OPENAI_API_KEY")}
    env.update(extra)
    return env


def rlm(*args: str, env: dict | None = None, timeout: float = 30) -> subprocess.CompletedProcess:
    """`rlm ARGS` in this process (rlm.testing.cli), with the environment a subprocess would get."""
    return run_cli(*args, env=env or cli_env())


# ------------------------------------------------------------------------------- call cache

def test_second_identical_run_is_served_from_the_cache(server, tmp_path):
    corpus = write_corpus(tmp_path / "c.txt")
    opts = AskOptions(model="fake", base_url=server.url, strategy="fanout", concurrency=4)
    first = ask(str(corpus), QUESTION, opts)
    assert first.coverage.complete and first.coverage.chunks_total >= 8
    n_first = len(server.requests)
    assert first.usage.calls == n_first and first.usage.cached_calls == 0
    assert first.usage.prompt_tokens > 0

    second = ask(str(corpus), QUESTION, AskOptions(model="fake", base_url=server.url,
                                                   strategy="fanout", concurrency=4))
    assert len(server.requests) == n_first, "a cached rerun made HTTP calls"
    assert second.usage.calls == 0
    assert second.usage.cached_calls == n_first
    assert second.usage.prompt_tokens == 0 and second.usage.completion_tokens == 0
    assert second.coverage.complete
    assert [f.claim for f in second.findings] == [f.claim for f in first.findings]
    assert second.answer.split("Coverage")[0] == first.answer.split("Coverage")[0]

    third = ask(str(corpus), QUESTION, AskOptions(model="fake", base_url=server.url,
                                                  strategy="fanout", no_cache=True))
    assert len(server.requests) == 2 * n_first, "--no-cache must call the model again"
    assert third.usage.calls == n_first and third.usage.cached_calls == 0


def test_cache_never_stores_rejected_or_unparsed_replies(server, tmp_path):
    """A reply that fails the schema is retried and is never replayed from the cache."""
    server.fault("PING-1", "schema", times=1)
    server.fault("PING-2", "malformed", times=1)
    msgs1 = [{"role": "system", "content": "s"}, {"role": "user", "content": "PING-1"}]
    msgs2 = [{"role": "system", "content": "s"}, {"role": "user", "content": "PING-2"}]

    async def go():
        cache = CallCache()
        m = CachedModel(OpenAICompatModel("fake", server.url, backoff_base=0.01), cache)
        b = Budget()
        try:
            for msgs in (msgs1, msgs2):
                res, _ = await call_json(m, msgs, MapResult, Limits(max_tokens=64), b)
                assert res.findings == []
            assert len(server.requests) == 4  # one rejected + one good (retry) reply for each
            assert len(cache) == 2  # only the replies to the retries, which validated
            key1 = m.key(msgs1, MapResult.model_json_schema(), Limits(max_tokens=64), "MapResult")
            assert cache.get(key1) is None  # the rejected first reply was not kept
            for msgs in (msgs1, msgs2):  # again: the first attempt is a miss, asked afresh
                await call_json(m, msgs, MapResult, Limits(max_tokens=64), b)
            assert len(server.requests) == 6 and len(cache) == 4
            for msgs in (msgs1, msgs2):  # and now it is a hit
                await call_json(m, msgs, MapResult, Limits(max_tokens=64), b)
            assert len(server.requests) == 6
            assert b.usage.calls == 6 and b.usage.cached_calls == 2
        finally:
            await m.aclose()

    anyio.run(go)


def test_cache_key_ignores_base_url_and_key_but_not_model_or_limits():
    k = CallCache.key
    msgs = [{"role": "user", "content": "x"}]
    base = k("m", msgs, {"type": "object"}, "R", 100, 0.0)
    assert base == k("m", msgs, {"type": "object"}, "R", 100, 0.0)
    assert base != k("m2", msgs, {"type": "object"}, "R", 100, 0.0)
    assert base != k("m", msgs, {"type": "object"}, "R", 101, 0.0)
    assert base != k("m", msgs, {"type": "object"}, "R", 100, 0.4)
    assert base != k("m", msgs, {"type": "array"}, "R", 100, 0.0)
    assert base != k("m", [{"role": "user", "content": "y"}], {"type": "object"}, "R", 100, 0.0)


# ------------------------------------------------------------------------------- run records

def test_runs_and_show_list_the_run(server, tmp_path):
    corpus = write_corpus(tmp_path / "c.txt", lines=2000)
    p = rlm("ask", str(corpus), QUESTION, "--strategy", "fanout", "--base-url", server.url,
            "--model", "fake", "--json")
    assert p.returncode == 0, p.stderr
    run_id = json.loads(p.stdout)["run_id"]

    runs = rlm("runs")
    assert runs.returncode == 0 and run_id in runs.stdout
    assert "complete" in runs.stdout and "fanout" in runs.stdout
    listed = json.loads(rlm("runs", "--json").stdout)
    assert listed[0]["id"] == run_id and listed[0]["status"] == "done"
    assert listed[0]["chunks_ok"] == listed[0]["chunks_total"] > 0

    show = rlm("show", run_id[-6:])  # a unique prefix of the random part
    assert show.returncode == 0 and run_id in show.stdout and "## Answer" in show.stdout
    shown = json.loads(rlm("show", "last", "--json").stdout)
    assert shown["run_id"] == run_id and shown["coverage"]["complete"] is True

    # events were appended as the run went: gate, plan, one per chunk with findings, report
    store = RunStore()
    kinds = [e["kind"] for e in store.events(run_id)]
    assert kinds[0] == "gate" and "plan" in kinds and kinds[-1] == "report"
    chunks = store.events(run_id, "chunk")
    assert len(chunks) == shown["coverage"]["chunks_total"]
    assert all(e["data"]["ok"] and e["data"]["findings"] for e in chunks)
    store.close()

    bad = rlm("show", "nope-no-such-run")
    assert bad.returncode == 2 and "no recorded run" in bad.stderr


def test_no_secret_reaches_the_data_or_cache_dir(fake_server, tmp_path):
    reset_mode_cache()
    fake_server.on("MapResult", map_responder)
    secret = "sk-test-SECRET123"
    corpus = write_corpus(tmp_path / "c.txt", lines=1500)
    env = cli_env(RLM_API_KEY=secret)
    p = rlm("ask", str(corpus), QUESTION, "--strategy", "fanout", "--base-url", fake_server.url,
            "--model", "fake", "--json", env=env)
    assert p.returncode == 0, p.stderr
    assert fake_server.requests[0]["headers"]["authorization"] == f"Bearer {secret}"
    # the secret on the command line too: in the URL's user info ...
    url = fake_server.url.replace("http://", f"http://user:{secret}@")
    p = rlm("ask", str(corpus), "again " + QUESTION, "--strategy", "fanout", "--base-url", url,
            "--model", "fake", "--json", env=env)
    assert p.returncode == 0, p.stderr
    assert secret not in p.stdout
    # ... and in a query string (a broken URL: the run ends in an error, which is recorded)
    p = rlm("ask", str(corpus), "third " + QUESTION, "--strategy", "fanout", "--base-url",
            f"{fake_server.url}?api_key={secret}", "--model", "fake", env=env)
    assert secret not in p.stdout + p.stderr
    statuses = [r["status"] for r in json.loads(rlm("runs", "--json", env=env).stdout)]
    assert len(statuses) == 3 and statuses[1:] == ["done", "done"]
    files = [f for d in (os.environ["RLM_DATA_DIR"], os.environ["RLM_CACHE_DIR"])
             for f in Path(d).rglob("*") if f.is_file()]
    assert any(f.name == "runs.sqlite3" for f in files) and any(f.name == "calls.sqlite3" for f in files)
    for f in files:
        try:
            data = f.read_bytes()
        except FileNotFoundError:  # a -wal or -shm file the last connection folded back
            continue
        assert secret.encode() not in data and b"SECRET123" not in data, f
        assert b"Bearer" not in data, f


def test_redact_argv():
    argv = ["ask", "f.txt", "q", "--api-key", "abc123456", "--token=zzz9999", "--base-url",
            "http://u:pw@h:1/v1?key=s3cr3t", "--model", "m", "sk-abcdefghijkl"]
    out = redact_argv(argv, secrets=[])
    assert out == ["ask", "f.txt", "q", "--api-key", "***", "--token=***", "--base-url",
                   "http://h:1/v1", "--model", "m", "***"]


def test_progress_counts_done_failed_tokens_in_flight():
    p = Progress(enabled=False)
    p.event("plan", {"total": 3})
    p.event("start", {"chunk": "c1"})
    p.event("start", {"chunk": "c2"})
    assert p.in_flight == 2
    p.event("chunk", {"ok": True, "chunk": "c1", "tokens": 120, "cached_calls": 0})
    p.event("chunk", {"ok": False, "chunk": "c2", "tokens": 150, "cached_calls": 1})
    assert (p.total, p.done, p.failed, p.tokens, p.in_flight) == (3, 1, 1, 150, 0)
    assert "failed 1" in p.extra() and "150 tokens" in p.extra() and "0 in flight" in p.extra()
    from io import StringIO

    from rich.console import Console

    buf = StringIO()
    with Progress(enabled=True, console=Console(file=buf, force_terminal=True, width=120)) as q:
        for k, d in [("gate", {"strategy": "fanout"}), ("plan", {"total": 2}),
                     ("start", {"chunk": "a"}), ("chunk", {"ok": True, "chunk": "a", "tokens": 7})]:
            q.event(k, d)
    assert "strategy: fanout" in buf.getvalue()
