"""MCP 2026-07-28: sampling and roots through InputRequiredResult rounds (rlm.mcp.rounds).

The real `rlm mcp` server (a subprocess) is driven by the SDK's own Client, which negotiates
2026-07-28 by itself (mode "auto") and answers the rounds with its sampling and roots callbacks.
"""

from __future__ import annotations

import json
import re

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from rlm.testing.mcp_client import connect, structured, text_of
from mcp_types import CreateMessageResult, ListRootsResult, Root, TextContent

NUMBERED = re.compile(r"^(\d+)\| (.*)$", re.M)


def reply(text: str) -> CreateMessageResult:
    return CreateMessageResult(role="assistant", content=TextContent(type="text", text=text),
                               model="client-model-x")


def test_sampling_runs_in_rounds_on_the_newest_protocol(tmp_path, fake_server):
    (tmp_path / "notes.txt").write_text("".join(f"note {i}: the quick brown fox\n"
                                                for i in range(1, 41))
                                        + "note 41: the launch code is BLUE-HERON\n")
    asked: list = []

    async def sampling(context, params):
        asked.append(params)
        if len(asked) == 1:  # an invalid first reply: validated and retried in the next round
            return reply("Sure! Here is what I found.")
        return reply(json.dumps({"answer": "The launch code is BLUE-HERON.", "cites": [41]}))

    async def main():
        async with connect([tmp_path], "--model", "sampling", sampling_callback=sampling) as c:
            version = c.protocol_version
            res = await c.call_tool("ask", {"path": "notes.txt",
                                            "question": "what is the launch code?",
                                            "strategy": "direct"})
            return version, res

    version, res = anyio.run(main)
    assert version == "2026-07-28"
    rep = structured(res)
    assert rep["model"] == "sampling" and rep["coverage"]["complete"] is True
    assert rep["answer"].split("\n\n")[1] == "The launch code is BLUE-HERON."
    assert [f["source"]["line_start"] for f in rep["findings"]] == [41]
    assert len(asked) == 2 and rep["usage"]["calls"] == 2
    assert "JSON schema" in asked[0].system_prompt and "BLUE-HERON" in asked[0].messages[0].content.text
    assert "rejected" in asked[1].messages[-1].content.text  # the retry names the error
    assert not text_of(res).startswith("the MCP client does not support sampling")
    assert fake_server.requests == []  # the client's model, not a configured one


def test_a_fanout_sends_its_chunks_in_rounds_and_reads_them_all(tmp_path):
    lines = [f"Paragraph {i} talks about routine matters and nothing else at all."
             for i in range(1, 1201)]
    lines[876] = "The committee approved the PLANNED change to the schedule."
    (tmp_path / "minutes.txt").write_text("\n".join(lines) + "\n")
    asked: list = []

    async def sampling(context, params):
        asked.append(params)
        text = params.messages[0].content.text
        if '"findings"' in params.system_prompt:  # a map call: cite the line with PLANNED
            found = [{"line": int(m.group(1)), "claim": "approved a planned change",
                      "quote": "PLANNED change"}
                     for m in NUMBERED.finditer(text) if "PLANNED" in m.group(2)]
            return reply(json.dumps({"findings": found}))
        return reply(json.dumps({"answer": "The committee approved a change.", "cites": [1]}))

    async def main():
        async with connect([tmp_path], "--model", "sampling", "--sampling-context", "4096",
                           "--concurrency", "16", sampling_callback=sampling) as c:
            return await c.call_tool("ask", {"path": "minutes.txt",
                                             "question": "what did the committee do?",
                                             "strategy": "fanout"})

    rep = structured(anyio.run(main))
    cov = rep["coverage"]
    assert cov["chunks_total"] > 4 and cov["chunks_ok"] == cov["chunks_total"] and cov["complete"]
    assert [(f["source"]["line_start"], f["verified"]) for f in rep["findings"]] == [(877, True)]
    assert "The committee approved a change." in rep["answer"]
    maps = [a for a in asked if '"findings"' in a.system_prompt]
    assert len(maps) == cov["chunks_total"] and rep["usage"]["calls"] == len(asked)


def test_client_roots_come_in_the_first_round_on_the_newest_protocol(tmp_path):
    server_root, client_root = tmp_path / "server", tmp_path / "client"
    server_root.mkdir()
    client_root.mkdir()
    (client_root / "c.log").write_text("alpha\nERROR beta\n")
    listed: list = []

    async def roots_cb(context):
        listed.append(1)
        return ListRootsResult(roots=[Root(uri=client_root.as_uri(), name="client")])

    async def main():
        async with connect([server_root], list_roots_callback=roots_cb) as c:
            version = c.protocol_version
            with_roots = await c.call_tool("grep", {"path": str(client_root / "c.log"),
                                                    "pattern": "ERROR"})
        async with connect([server_root]) as c:  # no roots declared
            without = await c.call_tool("grep", {"path": str(client_root / "c.log"),
                                                 "pattern": "ERROR"})
        return version, with_roots, without

    version, with_roots, without = anyio.run(main)
    assert version == "2026-07-28" and listed == [1]
    assert structured(with_roots)["hits"][0]["line"] == 2
    assert without.is_error and "outside the allowed roots" in text_of(without)


def test_roots_and_sampling_together_keep_the_roots_across_rounds(tmp_path):
    server_root, client_root = tmp_path / "server", tmp_path / "client"
    server_root.mkdir()
    client_root.mkdir()
    (client_root / "notes.txt").write_text("a\nb\nthe launch code is BLUE-HERON\n")
    listed: list = []
    sampled: list = []

    async def roots_cb(context):
        listed.append(1)
        return ListRootsResult(roots=[Root(uri=client_root.as_uri(), name="client")])

    async def sampling(context, params):
        sampled.append(1)
        return reply(json.dumps({"answer": "BLUE-HERON.", "cites": [3]}))

    async def main():
        async with connect([server_root], "--model", "sampling", list_roots_callback=roots_cb,
                           sampling_callback=sampling) as c:
            return await c.call_tool("ask", {"path": str(client_root / "notes.txt"),
                                             "question": "what is the launch code?",
                                             "strategy": "direct"})

    rep = structured(anyio.run(main))
    assert listed == [1] and sampled == [1]  # roots asked once, in the call's first round
    assert rep["coverage"]["complete"] and [f["source"]["line_start"] for f in rep["findings"]] == [3]


def test_the_rounds_on_the_wire_keys_and_sealed_state(tmp_path):
    """Driving the rounds by hand (allow_input_required): what the server asks for, and that
    only the state it minted continues the run."""
    (tmp_path / "notes.txt").write_text("a\nb\nthe launch code is BLUE-HERON\n")

    async def never(context, params):  # declares sampling; the test answers by hand
        raise AssertionError("the test drives the rounds itself")

    async def main():
        async with connect([tmp_path], "--model", "sampling", sampling_callback=never) as c:
            args = {"path": "notes.txt", "question": "what is the launch code?",
                    "strategy": "direct"}
            first = await c.session.call_tool("ask", args, allow_input_required=True)
            with pytest.raises(MCPError, match="requestState"):  # sealed: not ours, refused
                await c.session.call_tool("ask", args, allow_input_required=True,
                                          request_state="forged-state", input_responses={})
            [(key, req)] = first.input_requests.items()
            answer = reply(json.dumps({"answer": "BLUE-HERON.", "cites": [3]}))
            done = await c.session.call_tool("ask", args, allow_input_required=True,
                                             request_state=first.request_state,
                                             input_responses={key: answer})
            return first, key, req, done

    first, key, req, done = anyio.run(main)
    assert first.result_type == "input_required" and first.request_state
    assert key.startswith("rlm-sample-") and req.method == "sampling/createMessage"
    assert "BLUE-HERON" in req.params.messages[0].content.text  # the chunk travels in the request
    rep = structured(done)
    assert rep["coverage"]["complete"] and [f["source"]["line_start"] for f in rep["findings"]] == [3]


def test_rounds_work_over_streamable_http_too(tmp_path):
    """2026-07-28 over HTTP is single-exchange POSTs: the rounds are separate requests, and the
    run lives on in the server between them."""
    import socket
    import subprocess
    import sys
    import time

    from mcp import Client
    from rlm.testing.mcp_client import server_args, server_env

    (tmp_path / "notes.txt").write_text("a\nb\nthe launch code is BLUE-HERON\n")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, *server_args([tmp_path], "--http", f"127.0.0.1:{port}",
                                                          "--model", "sampling")],
                            env=server_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    sampled: list = []

    async def sampling(context, params):
        sampled.append(params)
        return reply(json.dumps({"answer": "BLUE-HERON.", "cites": [3]}))

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
            async with Client(f"http://127.0.0.1:{port}/mcp", read_timeout_seconds=60,
                              sampling_callback=sampling) as c:
                return c.protocol_version, await c.call_tool(
                    "ask", {"path": "notes.txt", "question": "what is the launch code?",
                            "strategy": "direct"})

        version, res = anyio.run(main)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
    rep = structured(res)
    assert version == "2026-07-28" and len(sampled) == 1
    assert rep["model"] == "sampling" and rep["coverage"]["complete"]
    assert [f["source"]["line_start"] for f in rep["findings"]] == [3]


def test_a_call_the_client_stops_retrying_is_recorded_interrupted_and_resumable(tmp_path):
    """No back-channel means no cancel request to see: a client that simply stops retrying has
    given up. After 2 x --timeout + 5 s without a round the run stops like a cancelled one, its
    report is recorded with the unread chunk interrupted, and resume finishes it."""
    (tmp_path / "notes.txt").write_text("a\nb\nthe launch code is BLUE-HERON\n")

    async def never(context, params):
        raise AssertionError("the test drives the rounds itself")

    async def answer(context, params):
        return reply(json.dumps({"answer": "BLUE-HERON.", "cites": [3]}))

    async def main():
        async with connect([tmp_path], "--model", "sampling", "--timeout", "1",
                           sampling_callback=never) as c:
            first = await c.session.call_tool("ask", {"path": "notes.txt", "question": "code?",
                                                      "strategy": "direct"},
                                              allow_input_required=True)
            await anyio.sleep(12)  # the client gave up: no second round
            listed = await c.call_tool("runs", {"limit": 5})
        async with connect([tmp_path], "--model", "sampling", sampling_callback=answer) as c:
            resumed = await c.call_tool("resume", {"run_id": "last"})
        return first, listed, resumed

    first, listed, resumed = anyio.run(main)
    assert first.result_type == "input_required"
    [run] = structured(listed)["runs"]
    assert run["status"] == "interrupted", run
    rep = structured(resumed)
    assert rep["coverage"]["complete"] and [f["source"]["line_start"] for f in rep["findings"]] == [3]
