"""OpenAICompatModel and the registry against the real fake server (no mocks of our code),
plus self-tests of the fake server's faults."""

from __future__ import annotations

import importlib.util
import re

import asyncio
import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from rlm.testing import FakeServer, Reply, minimal_instance
from rlm.errors import ModelCallError, ModelUnreachable, UsageError
from rlm.models.base import Limits, Model
from rlm.models.http_errors import _retry_after
from rlm.models.json_text import parse_json_text
from rlm.models.openai_compat import OpenAICompatModel, reset_mode_cache
from rlm.models.registry import describe, resolve_model

SCHEMA = {
    "title": "ChunkFindings",
    "type": "object",
    "properties": {
        "findings": {
            "type": "array",
            "maxItems": 5,
            "items": {
                "type": "object",
                "properties": {
                    "line": {"type": "integer", "minimum": 1},
                    "quote": {"type": "string", "maxLength": 80},
                    "label": {"enum": ["error", "security", "config"]},
                },
                "required": ["line", "quote", "label"],
            },
        }
    },
    "required": ["findings"],
}
SECRET = "sk-test-THIS-IS-SECRET-1234567890"


def run(coro):
    return asyncio.run(coro)


def msgs(text: str = "chunk 1\n1| ERROR panic in billing") -> list[dict[str, str]]:
    return [{"role": "system", "content": "Return JSON findings."}, {"role": "user", "content": text}]


def make(server_or_url, **kw) -> OpenAICompatModel:
    url = server_or_url if isinstance(server_or_url, str) else server_or_url.url
    kw.setdefault("timeout", 2.0)
    kw.setdefault("max_attempts", 3)
    kw.setdefault("backoff_base", 0.01)
    return OpenAICompatModel("fake-model", url, **kw)


async def call(model: OpenAICompatModel, text: str = "chunk 1\n1| ERROR panic in billing", schema=SCHEMA, **lim):
    try:
        return await model.complete(msgs(text), schema, Limits(max_tokens=64, **lim), schema_name="findings")
    finally:
        await model.aclose()


def findings_responder(req, text):
    return {"findings": [{"line": 1, "quote": "ERROR panic in billing", "label": "error"}]}


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.fixture(autouse=True)
def _fresh_modes():
    reset_mode_cache()
    yield
    reset_mode_cache()


# --------------------------------------------------------------------------- the client


def test_model_protocol_and_count_tokens():
    m = OpenAICompatModel("x", "http://127.0.0.1:1/v1", chars_per_token=4.0)
    assert isinstance(m, Model)
    assert m.count_tokens("") == 0 and m.count_tokens("abcd") == 1 and m.count_tokens("abcde") == 2
    assert m.endpoint == "http://127.0.0.1:1/v1/chat/completions"


def test_normal_call_parses_json_and_usage(fake_server):
    fake_server.on("findings", findings_responder)
    c = run(call(make(fake_server)))
    assert c.data == findings_responder(None, "")
    assert json.loads(c.text) == c.data
    assert c.model == "fake-model"
    (req,) = fake_server.requests
    body = req["body"]
    assert req["mode"] == "json_schema" and req["schema_name"] == "findings"
    assert body["response_format"]["json_schema"]["schema"] == SCHEMA
    assert body["response_format"]["json_schema"]["strict"] is False
    assert body["max_tokens"] == 64 and body["temperature"] == 0.0 and body["model"] == "fake-model"
    assert "authorization" not in req["headers"]
    prompt_chars = len("Return JSON findings.") + 1 + len(msgs()[1]["content"])
    assert c.usage.prompt_tokens == -(-prompt_chars // 4)
    assert c.usage.completion_tokens == -(-len(c.text) // 4)
    assert c.usage.calls == 1


def test_fenced_and_non_json_content(fake_server):
    fake_server.on("findings", lambda r, t: '```json\n{"findings": []}\n```')
    assert run(call(make(fake_server))).data == {"findings": []}
    fake_server.on("findings", lambda r, t: "I cannot do that.")
    c = run(call(make(fake_server)))
    assert c.data is None and c.text == "I cannot do that."
    assert parse_json_text('Sure! Here it is: {"a": [1]} Hope it helps.') == {"a": [1]}
    assert parse_json_text("") is None


def test_plain_call_without_schema(fake_server):
    fake_server.default = lambda r, t: "The answer is 42."
    c = run(call(make(fake_server), schema=None))
    assert c.text == "The answer is 42." and c.data is None
    assert fake_server.requests[0]["mode"] == "text"
    assert "response_format" not in fake_server.requests[0]["body"]


def test_usage_estimated_when_absent(fake_server):
    fake_server.on("findings", lambda r, t: Reply(content={"findings": []}, omit_usage=True))
    m = make(fake_server, chars_per_token=2.0)
    c = run(call(m, "abcdef"))
    assert c.usage.completion_tokens == m.count_tokens('{"findings": []}')
    assert c.usage.prompt_tokens == m.count_tokens("Return JSON findings.\nabcdef")


def test_fallback_when_json_schema_refused_and_remembered(fake_server):
    fake_server.mode_refuse("json_schema")  # like llama.cpp's server: HTTP 500
    fake_server.on("findings", findings_responder)
    m = make(fake_server)
    c = run(call(m))
    assert c.data == findings_responder(None, "")
    assert [r["mode"] for r in fake_server.requests] == ["json_schema", "json_object+schema"]
    assert [r["status"] for r in fake_server.requests] == [500, 200]
    assert m.confirmed_mode == "json_object+schema"
    # remembered per base URL, also by a fresh instance: straight to the working mode
    fake_server.reset()
    fake_server.mode_refuse("json_schema")
    c2 = run(call(make(fake_server)))
    assert c2.data == {"findings": []}
    assert [r["mode"] for r in fake_server.requests] == ["json_object+schema"]


def test_full_fallback_chain_to_plain_text(fake_server):
    fake_server.mode_refuse("json_schema", status=400)
    fake_server.mode_refuse("json_object", status=422)
    fake_server.default = lambda r, t: '{"findings": []}'
    m = make(fake_server)
    assert run(call(m)).data == {"findings": []}
    assert [r["mode"] for r in fake_server.requests] == ["json_schema", "json_object+schema", "json_object", "text"]
    assert m.confirmed_mode == "text"
    run(call(m))
    assert [r["mode"] for r in fake_server.requests][-1:] == ["text"] and len(fake_server.requests) == 5


def test_confirmed_mode_errors_are_retried_not_fallen_back(fake_server):
    m = make(fake_server)
    run(call(m, "warm up"))
    assert m.confirmed_mode == "json_schema"
    fake_server.fault("chunk 2", "500", times=1)
    fake_server.fault("chunk 3", "500", times=1, status=400, message="bad response_format")
    assert run(call(m, "chunk 2")).data == {"findings": []}
    assert [r["mode"] for r in fake_server.requests_matching("chunk 2")] == ["json_schema", "json_schema"]
    with pytest.raises(ModelCallError, match="HTTP 400"):  # not retried, not fallen back
        run(call(m, "chunk 3"))
    assert len(fake_server.requests_matching("chunk 3")) == 1


def test_500_then_success_is_retried(fake_server):
    fake_server.fault("chunk 7", "500", times=1)
    fake_server.on("findings", findings_responder)
    m = make(fake_server)
    c = run(call(m, "chunk 7 text"))
    assert c.data == findings_responder(None, "")
    reqs = fake_server.requests
    assert [r["status"] for r in reqs] == [500, 200]
    assert [r["mode"] for r in reqs] == ["json_schema", "json_schema"]  # a bare 500 is not a refusal
    assert m.confirmed_mode == "json_schema"


def test_429_is_retried_honouring_retry_after(fake_server):
    fake_server.fault("chunk", "429", times=2)
    t0 = time.monotonic()
    c = run(call(make(fake_server, backoff_base=5.0)))  # Retry-After: 0 wins over the backoff
    assert c.data == {"findings": []}
    assert [r["status"] for r in fake_server.requests] == [429, 429, 200]
    assert time.monotonic() - t0 < 3
    assert _retry_after(httpx.Response(429, headers={"Retry-After": "120"})) == 10.0
    assert _retry_after(httpx.Response(429, headers={"Retry-After": "1.5"})) == 1.5
    assert _retry_after(httpx.Response(429)) is None


def test_dropped_connection_is_retried(fake_server):
    fake_server.fault("chunk", "drop", times=1)
    assert run(call(make(fake_server))).data == {"findings": []}
    assert [r["fault"] for r in fake_server.requests] == ["drop", None]


def test_slow_past_timeout_raises_model_call_error(fake_server):
    fake_server.fault("chunk", "slow", seconds=3)
    t0 = time.monotonic()
    with pytest.raises(ModelCallError, match=r"timeout after 2 attempts \(0\.3 s each\)"):
        run(call(make(fake_server, timeout=0.3, max_attempts=2)))
    assert time.monotonic() - t0 < 2.5
    # limits.timeout also bounds the request
    fake_server.reset()
    fake_server.fault("chunk", "slow", seconds=3)
    with pytest.raises(ModelCallError, match="timeout"):
        run(call(make(fake_server, timeout=30, max_attempts=1), timeout=0.2))


def test_persistent_500_raises_model_call_error(fake_server):
    m = make(fake_server, max_attempts=3)
    run(call(m, "warm up"))  # confirm the mode
    fake_server.fault("chunk", "500")
    with pytest.raises(ModelCallError) as ei:
        run(call(m))
    assert ei.value.reason.startswith("HTTP 500 after 3 attempts")
    assert len(fake_server.requests_matching("chunk")) == 3


def test_persistent_500_before_any_success_gives_up(fake_server):
    fake_server.fault("chunk", "500")
    with pytest.raises(ModelCallError) as ei:
        run(call(make(fake_server, max_attempts=2)))
    # a bare 500 is retried once per structured mode, then the next mode is tried
    n = len(fake_server.requests)
    assert ei.value.reason.startswith(f"HTTP 500 after {n} attempts")
    assert n == 8 and all(r["status"] == 500 for r in fake_server.requests)


def test_unreachable_port_raises_model_unreachable():
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(ModelUnreachable) as ei:
        run(call(make(url, max_attempts=2)))
    msg = str(ei.value)
    assert url in msg and "connection refused" in msg
    assert ei.value.exit_code == 2


def test_server_gone_after_success_is_a_call_error():
    server = FakeServer().start()
    m = make(server, max_attempts=2)
    run(call(m, "first"))
    server.stop()
    with pytest.raises(ModelCallError, match="cannot connect"):
        run(call(m))


def test_wrong_path_or_key_before_success_is_usage_error(fake_server):
    with pytest.raises(ModelUnreachable, match="HTTP 404"):
        run(call(make(fake_server.url + "/nope")))
    keyed = FakeServer(api_key=SECRET).start()
    try:
        with pytest.raises(ModelUnreachable, match="HTTP 401") as ei:
            run(call(make(keyed, api_key="sk-wrong-key-0000")))
        assert "sk-wrong-key-0000" not in str(ei.value)
    finally:
        keyed.stop()


def test_api_key_sent_but_never_shown(fake_server):
    keyed = FakeServer(api_key=SECRET).start()
    try:
        m = make(keyed, api_key=SECRET, max_attempts=2)
        assert run(call(m, "ok")).data == {"findings": []}
        assert keyed.requests[0]["headers"]["authorization"] == f"Bearer {SECRET}"
        texts = [repr(m), str(m), describe(m), m.describe()]
        keyed.fault("chunk", "500")
        with pytest.raises(ModelCallError) as e1:
            run(call(m))
        texts += [str(e1.value), repr(e1.value), e1.value.reason]
        keyed.fault("echo", "500", message=f"bad key {SECRET} received")  # a server echoing the key
        with pytest.raises(ModelCallError) as e2:
            run(call(m, "echo"))
        texts += [str(e2.value), repr(e2.value)]
    finally:
        keyed.stop()
    with pytest.raises(ModelUnreachable) as e3:
        run(call(make(f"http://127.0.0.1:{free_port()}/v1", api_key=SECRET, max_attempts=1)))
    texts += [str(e3.value), repr(e3.value)]
    assert "key=set" in repr(m)
    for t in texts:
        assert SECRET not in t, t


# --------------------------------------------------------------------------- the registry


def test_registry(monkeypatch, tmp_path):
    for k in ("RLM_MODEL", "RLM_BASE_URL", "RLM_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(k, raising=False)
    with pytest.raises(UsageError, match="model 'qwen' needs --base-url or RLM_BASE_URL"):
        resolve_model("qwen")
    m = resolve_model("qwen", base_url="http://h:1/v1", api_key=SECRET, max_attempts=2)
    assert isinstance(m, OpenAICompatModel) and m.name == "qwen" and m.max_attempts == 2
    assert m.context_tokens == 8192 and SECRET not in describe(m)
    monkeypatch.setenv("RLM_BASE_URL", "http://envhost:2/v1")
    d = resolve_model()
    assert d.name == "default" and d.base_url == "http://envhost:2/v1"
    monkeypatch.setenv("RLM_MODEL", "llama3")
    assert resolve_model().name == "llama3"
    assert resolve_model("other").name == "other"
    with pytest.raises(UsageError, match="OPENAI_API_KEY"):
        resolve_model("openai:gpt-4o-mini")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    o = resolve_model("openai:gpt-4o-mini", timeout=9)
    assert (o.name, o.base_url, o.context_tokens, o.timeout) == ("gpt-4o-mini", "https://api.openai.com/v1", 128000, 9)
    assert SECRET not in repr(o) and SECRET not in describe(o)
    with pytest.raises(UsageError, match="invalid base URL"):
        resolve_model("x", base_url="localhost:8080")
    # nothing configured: the `none` tier (code only), never the embedded model
    for k in ("RLM_MODEL", "RLM_BASE_URL"):
        monkeypatch.delenv(k)
    none = resolve_model()
    assert type(none).__name__ == "CodeOnlyModel" and none.name == "none"
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF")
    monkeypatch.setenv("RLM_LOCAL_GGUF", str(gguf))
    if importlib.util.find_spec("llama_cpp") is None:  # the extra is not installed
        with pytest.raises(UsageError, match=re.escape("pip install 'rlm[local]'")):
            resolve_model("local")
    else:  # the model file is only located, not loaded
        loc = resolve_model("local")
        assert type(loc).__name__ == "LocalModel" and isinstance(describe(loc), str)


# --------------------------------------------------------------------------- the fake server itself


def post(server: FakeServer, text: str, schema=SCHEMA, name="findings", timeout=5.0, mode="json_schema"):
    body = {"model": "m", "messages": [{"role": "user", "content": text}], "max_tokens": 10}
    if mode == "json_schema":
        body["response_format"] = {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}
    elif mode == "json_object+schema":
        body["response_format"] = {"type": "json_object", "schema": {**schema, "title": name}}
    return httpx.post(server.url + "/chat/completions", json=body, timeout=timeout)


def content(resp: httpx.Response) -> str:
    return resp.json()["choices"][0]["message"]["content"]


def test_fake_default_and_routing(fake_server):
    r = post(fake_server, "hi")
    assert r.status_code == 200 and json.loads(content(r)) == {"findings": []}
    data = r.json()
    assert data["object"] == "chat.completion" and data["choices"][0]["finish_reason"] == "stop"
    u = data["usage"]
    assert u["total_tokens"] == u["prompt_tokens"] + u["completion_tokens"] and u["prompt_tokens"] == 1
    fake_server.on("findings", lambda req, text: {"findings": [{"line": 2, "quote": text, "label": "error"}]})
    assert json.loads(content(post(fake_server, "abc")))["findings"][0]["quote"] == "abc"
    assert json.loads(content(post(fake_server, "abc", mode="json_object+schema")))["findings"][0]["quote"] == "abc"
    assert json.loads(content(post(fake_server, "abc", name="other"))) == {"findings": []}
    assert json.loads(content(post(fake_server, "abc", mode="text"))) == {}
    assert httpx.get(fake_server.url + "/models").json()["data"][0]["id"] == "fake-model"
    assert len(fake_server.requests) == 5 and fake_server.requests[0]["t"] <= fake_server.requests[-1]["t"]
    fake_server.reset()
    assert fake_server.requests == []
    assert minimal_instance({"type": "object", "properties": {"a": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/B"}}},
                             "$defs": {"B": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 3}, "s": {"type": "string", "minLength": 2}}}}}) \
        == {"a": [{"n": 3, "s": "xx"}]}


def test_fake_fault_500_429_times(fake_server):
    f = fake_server.fault("boom", "500", times=2)
    assert [post(fake_server, "a boom").status_code for _ in range(3)] == [500, 500, 200]
    assert f.hits == 2 and post(fake_server, "quiet").status_code == 200
    fake_server.fault("rate", "429")
    for _ in range(2):
        r = post(fake_server, "rate me")
        assert r.status_code == 429 and r.headers["retry-after"] == "0"
    assert [r["fault"] for r in fake_server.requests_matching("rate")] == ["429", "429"]


def test_fake_fault_slow(fake_server):
    fake_server.fault("slow", "slow", seconds=0.4)
    t0 = time.monotonic()
    assert post(fake_server, "slow one").status_code == 200
    assert time.monotonic() - t0 >= 0.35
    with pytest.raises(httpx.ReadTimeout):
        post(fake_server, "slow two", timeout=0.1)


def test_fake_fault_malformed_and_schema(fake_server):
    fake_server.fault("bad", "malformed")
    text = content(post(fake_server, "bad json"))
    with pytest.raises(ValueError):
        json.loads(text)
    fake_server.fault("wrong", "schema")
    data = json.loads(content(post(fake_server, "wrong shape")))
    assert data == {"findings": "nope"}  # valid JSON, but findings must be an array


def test_fake_fault_badquote(fake_server):
    fake_server.on("findings", findings_responder)
    fake_server.fault("chunk 9", "badquote")
    prompt = "chunk 9\n1| ERROR panic in billing"
    data = json.loads(content(post(fake_server, prompt)))
    q = data["findings"][0]["quote"]
    assert q and q not in prompt and data["findings"][0]["line"] == 1


def test_fake_fault_drop_and_mode_refuse(fake_server):
    fake_server.fault("drop", "drop", times=1)
    with pytest.raises(httpx.RemoteProtocolError):
        post(fake_server, "drop me")
    assert post(fake_server, "drop me").status_code == 200
    fake_server.mode_refuse("json_schema")
    r = post(fake_server, "x")
    assert r.status_code == 500 and "response_format" in r.json()["error"]["message"]
    assert post(fake_server, "x", mode="json_object+schema").status_code == 200
    with pytest.raises(ValueError):
        fake_server.fault("x", "explode")


def test_concurrent_fan_out(fake_server):
    fake_server.on("findings", lambda req, text: {"findings": [{"line": 1, "quote": text, "label": "error"}]})
    fake_server.fault("chunk 5 ", "500", times=1)
    fake_server.fault("chunk 6 ", "slow", times=1, seconds=0.3)
    m = make(fake_server)

    async def fan_out():
        try:
            return await asyncio.gather(*(m.complete(msgs(f"chunk {i} "), SCHEMA, Limits(), "findings") for i in range(48)))
        finally:
            await m.aclose()

    t0 = time.monotonic()
    results = run(fan_out())
    assert [c.data["findings"][0]["quote"] for c in results] == [f"chunk {i} " for i in range(48)]
    assert len(fake_server.requests) == 49 and time.monotonic() - t0 < 3


def test_fake_server_as_script():
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "rlm.testing.fake_server", "--port", str(port)],
                            stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline().strip()
        assert line == f"http://127.0.0.1:{port}/v1"
        r = httpx.post(line + "/chat/completions", json={"messages": [{"role": "user", "content": "hi"}]}, timeout=5)
        assert r.status_code == 200 and content(r) == "{}"
    finally:
        proc.terminate()
        proc.wait(timeout=5)
        proc.stdout.close()
