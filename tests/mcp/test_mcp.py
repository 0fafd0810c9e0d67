"""`rlm mcp` driven by the official SDK client over stdio, against the real fake model server."""

from __future__ import annotations

import json
import os
import re
import threading

import anyio
import pytest
from rlm.fixtures.log import write_log

from rlm.testing.mcp_client import connect, fake_model, structured, text_of
from tests.pipeline.test_pipeline import keyword_mapper
from tests.store.test_store import (
    QUESTION,
    chunk_of,
    map_requests,
    map_responder,
    write_corpus,
)

pytest.importorskip("mcp")


def test_tools_are_listed_with_schemas(tmp_path):
    async def main():
        async with connect([tmp_path]) as c:
            return {t.name: t for t in (await c.list_tools()).tools}

    tools = anyio.run(main)
    assert set(tools) == {"ask", "audit", "mine", "runs", "show", "resume", "grep", "read_lines"}
    ask = tools["ask"]
    assert ask.input_schema["required"] == ["path", "question"]
    props = ask.input_schema["properties"]
    assert {"strategy", "max_calls", "max_tokens"} <= set(props)
    assert "fanout" in json.dumps(props["strategy"])
    assert {"coverage", "findings", "usage", "run_id"} <= set(ask.output_schema["properties"])
    assert tools["mine"].input_schema["properties"]["questions"]["type"] == "array"
    assert tools["read_lines"].input_schema["required"] == ["path", "start", "end"]
    for t in tools.values():  # written for an agent: what it costs and what comes back
        assert t.output_schema and len(t.description) > 150, t.name
        assert ("model call" in t.description or "Cost" in t.description), t.name


def test_ask_on_a_log_returns_the_needles_with_coverage(tmp_path, fake_server):
    log = tmp_path / "service.log"
    key = write_log(log, lines=20_000)
    fake_server.on("GroupJudgement", lambda req, text: {"label": "error", "summary": "odd lines"})
    progress: list[tuple] = []

    async def on_progress(p, total, msg):
        progress.append((p, total, msg))

    async def main():
        async with connect([tmp_path], *fake_model(fake_server)) as c:
            return await c.call_tool("ask", {"path": "service.log", "question": "anomalies?"},
                                     progress_callback=on_progress)

    res = anyio.run(main)
    rep = structured(res)
    cited = {f["source"]["line_start"] for f in rep["findings"] if f["verified"]}
    assert {n["line"] for n in key["needles"]} <= cited
    assert rep["strategy"] == "profile" and rep["coverage"]["complete"] is True
    assert rep["coverage"]["statement"] and rep["run_id"]
    assert f"Run {rep['run_id']}: coverage complete" in text_of(res)
    assert progress and "chunks done" in progress[-1][2]
    values = [p[0] for p in progress]
    assert values == sorted(set(values))  # progress only increases
    assert progress[-1][0] == progress[-1][1]  # the last notification: every unit finished


def _prose(tmp_path, n=2000, planted=None):
    lines = [f"Line {i} of ordinary prose about the weather and lunch plans." for i in range(1, n + 1)]
    for ln, text in (planted or {}).items():
        lines[ln - 1] = text
    p = tmp_path / "prose.txt"
    p.write_text("\n".join(lines) + "\n")
    return p


def test_fault_injected_fanout_is_incomplete_with_failed_chunks_named(tmp_path, fake_server):
    p = _prose(tmp_path, planted={1500: "A POISONED line that the server always fails on."})
    fake_server.on("MapResult", keyword_mapper("nothing-matches"))
    fake_server.fault("POISONED", "500")  # every attempt fails: retried, then the chunk fails

    async def main():
        async with connect([tmp_path], *fake_model(fake_server)) as c:
            return await c.call_tool("ask", {"path": str(p), "question": "what is said?",
                                             "strategy": "fanout"})

    res = anyio.run(main)
    rep = structured(res)
    cov = rep["coverage"]
    assert cov["complete"] is False
    [failed] = cov["chunks_failed"]
    assert failed["line_start"] <= 1500 <= failed["line_end"]
    assert "HTTP 500" in failed["reason"]
    assert failed["chunk"] in cov["statement"]
    assert cov["chunks_ok"] == cov["chunks_total"] - 1
    assert "INCOMPLETE" in text_of(res) and "resume" in text_of(res)


def test_paths_outside_the_roots_are_refused_and_never_read(tmp_path, fake_server):
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    secret = outside / "secret.log"
    secret.write_text("TOKEN-1234 the secret line\n")
    (root / "ok.txt").write_text("TOKEN-1234 a fine line\n")
    os.symlink(secret, root / "link.log")  # inside by name, outside once followed
    os.symlink(outside, root / "linkdir")

    async def main():
        out = {}
        async with connect([root], *fake_model(fake_server)) as c:
            out["ask"] = await c.call_tool("ask", {"path": str(secret), "question": "what?"})
            out["grep"] = await c.call_tool("grep", {"path": "../outside/secret.log",
                                                     "pattern": "TOKEN"})
            out["link"] = await c.call_tool("read_lines", {"path": "link.log", "start": 1, "end": 1})
            out["linkdir"] = await c.call_tool("grep", {"path": "linkdir", "pattern": "TOKEN"})
            out["ok"] = await c.call_tool("grep", {"path": "ok.txt", "pattern": "TOKEN"})
        return out

    out = anyio.run(main)
    for name in ("ask", "grep"):
        assert out[name].is_error, name
        assert "outside the allowed roots" in text_of(out[name]) and str(root) in text_of(out[name])
    for name in ("link", "linkdir"):
        assert out[name].is_error and "symlink" in text_of(out[name]), name
    assert all("secret line" not in text_of(r) for r in out.values())
    assert structured(out["ok"])["hits_total"] == 1
    assert fake_server.requests == []  # nothing was sent to a model either


def test_cancellation_leaves_a_resumable_run(tmp_path, fake_server):
    corpus = write_corpus(tmp_path / "big.txt", lines=5000)
    release = threading.Event()
    seen: list[str] = []
    lock = threading.Lock()
    answer_first = 3

    def responder(req, text):
        key = chunk_of(text)
        with lock:
            if key not in seen:
                seen.append(key)
            hang = not release.is_set() and seen.index(key) >= answer_first
        if hang:
            release.wait(30)
        return map_responder(req, text)

    fake_server.on("MapResult", responder)
    fake_server.on("AnswerResult", lambda req, text: {"answer": "Cited.", "cites": [1]})

    async def main():
        async with connect([tmp_path], *fake_model(fake_server), "--concurrency", "2") as c:
            done = anyio.Event()

            async def on_progress(p, total, msg):
                # the chunks done, not the progress value: that also counts the code scans
                # before the plan, so under load it reached 3 with 2 chunks answered
                m = re.search(r"(\d+)/\S+ chunks done", msg or "")
                if m and int(m.group(1)) >= answer_first:
                    done.set()

            async with anyio.create_task_group() as tg:
                async def call():
                    await c.call_tool("ask", {"path": "big.txt", "question": QUESTION,
                                              "strategy": "fanout"}, progress_callback=on_progress)
                tg.start_soon(call)
                with anyio.fail_after(60):
                    await done.wait()
                tg.cancel_scope.cancel()  # the client gives up on the call
            with anyio.fail_after(30):  # the server records the run as interrupted
                while True:
                    runs = structured(await c.call_tool("runs", {"limit": 5}))["runs"]
                    if runs and runs[0]["status"] == "interrupted":
                        break
                    await anyio.sleep(0.2)
            run_id = runs[0]["id"]
            shown = structured(await c.call_tool("show", {"run_id": run_id}))
            release.set()
            before = len(fake_server.requests)
            resumed = structured(await c.call_tool("resume", {"run_id": run_id}))
            return shown, resumed, before

    shown, resumed, before = anyio.run(main)
    cov = shown["coverage"]
    assert cov["complete"] is False and cov["chunks_ok"] >= answer_first
    reasons = {f["reason"] for f in cov["chunks_failed"]}
    assert reasons == {"interrupted"}
    assert cov["chunks_ok"] + len(cov["chunks_failed"]) == cov["chunks_total"]
    assert resumed["coverage"]["complete"] is True
    assert resumed["usage"]["cached_calls"] >= answer_first  # answered chunks were not re-asked
    again = {chunk_of(r) for r in map_requests(fake_server, before)}
    assert len(again) == cov["chunks_total"] - cov["chunks_ok"]


def _small_notes(tmp_path):
    p = tmp_path / "notes.txt"
    p.write_text("".join(f"note {i}: the quick brown fox\n" for i in range(1, 41))
                 + "note 41: the launch code is BLUE-HERON\n")
    return p


def test_sampling_sends_sub_calls_to_the_clients_model(tmp_path, fake_server):
    from mcp_types import CreateMessageResult, TextContent

    _small_notes(tmp_path)
    asked: list = []

    async def sampling(context, params):
        asked.append(params)
        if len(asked) == 1:  # an invalid first reply: validation and retries still apply
            text = "Sure! Here is what I found."
        else:
            text = json.dumps({"answer": "The launch code is BLUE-HERON.", "cites": [41]})
        return CreateMessageResult(role="assistant", content=TextContent(type="text", text=text),
                                   model="client-model-x")

    async def main():
        async with connect([tmp_path], "--model", "sampling", mode="legacy",
                           sampling_callback=sampling) as c:
            return await c.call_tool("ask", {"path": "notes.txt",
                                             "question": "what is the launch code?",
                                             "strategy": "direct"})

    res = anyio.run(main)
    rep = structured(res)
    assert rep["answer"].split("\n\n")[1] == "The launch code is BLUE-HERON."  # after code's
    assert [f["source"]["line_start"] for f in rep["findings"]] == [41]
    assert "BLUE-HERON" in rep["findings"][0]["evidence"]  # quoted from the file by code
    assert rep["coverage"]["complete"] is True and rep["model"] == "sampling"
    assert len(asked) == 2 and rep["usage"]["calls"] == 2
    first = asked[0]
    assert "JSON schema" in first.system_prompt and "cites" in first.system_prompt
    assert "BLUE-HERON" in first.messages[0].content.text  # the chunk travels in the message
    assert "rejected" in asked[1].messages[-1].content.text  # the retry names the error
    assert fake_server.requests == []


def test_sampling_unsupported_says_so_in_one_line_and_runs_code_only(tmp_path, fake_server):
    _small_notes(tmp_path)

    async def main():
        async with connect([tmp_path], "--model", "sampling") as c:  # no sampling callback
            return await c.call_tool("ask", {"path": "notes.txt",
                                             "question": "what about 'BLUE-HERON'?",
                                             "strategy": "grep"})

    res = anyio.run(main)
    rep = structured(res)
    first = text_of(res).splitlines()[0]
    assert first.startswith("the MCP client does not support sampling")
    assert any(d.startswith("the MCP client does not support sampling")
               for d in rep["coverage"]["declared"])
    assert [f["source"]["line_start"] for f in rep["findings"]] == [41]  # code's grep hit stays
    assert fake_server.requests == []


def test_http_transport_starts_and_answers_a_call(tmp_path):
    import socket
    import subprocess
    import sys
    import time

    from mcp import Client

    from rlm.testing.mcp_client import server_args, server_env

    _small_notes(tmp_path)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, *server_args([tmp_path], "--http",
                                                          f"127.0.0.1:{port}")],
                            env=server_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the HTTP server did not start"
                time.sleep(0.2)

        async def main():
            async with Client(f"http://127.0.0.1:{port}/mcp", read_timeout_seconds=60) as c:
                return await c.call_tool("grep", {"path": "notes.txt", "pattern": "BLUE-\\w+"})

        res = anyio.run(main)
        got = structured(res)
        assert got["hits_total"] == 1 and got["hits"][0]["line"] == 41
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
