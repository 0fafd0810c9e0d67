"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for tests.

Stdlib only (``http.server.ThreadingHTTPServer`` in a daemon thread), so it can be used by pytest
fixtures and by subprocess tests alike::

    with FakeServer() as server:
        server.on("findings", lambda req, text: {"findings": []})
        server.fault("chunk 3", "500", times=2)      # first two requests mentioning "chunk 3" fail
        server.mode_refuse("json_schema")             # behave like llama.cpp's server
        ... point the client at server.url ...
        assert len(server.requests) == 3

Routing.  A request is answered by the responder registered with ``on(name, fn)`` for the schema
the request names: ``response_format.json_schema.name`` (type ``json_schema``) or the ``title`` of
``response_format.schema`` (type ``json_object`` with a schema).  Everything else goes to
``server.default``; the default default returns a minimal instance of the request's JSON schema
(``{}`` when the request carries no schema).  A responder is ``fn(req: dict, user_text: str)`` and
returns a dict/list (JSON-encoded as the message content), a str (sent verbatim) or a ``Reply``.

Faults (``fault(match, kind, times=None, **kw)``) apply to requests whose last user message
contains ``match``; ``times`` is how many requests they hit before they stop (None: forever).
Kinds: ``500`` (kw ``status``), ``429`` (Retry-After, kw ``retry_after``, default "0"), ``slow``
(kw ``seconds``, default 5; then answers normally), ``malformed`` (content that is not JSON),
``schema`` (valid JSON that violates the schema), ``badquote`` (every "quote" value replaced by a
string that is not in the prompt), ``drop`` (the connection is closed without an answer).

Each received request is recorded in ``server.requests`` as a dict: ``t`` (time.time()),
``path``, ``headers`` (lower-case names), ``body`` (the parsed JSON), ``user_text``, ``mode``
("json_schema" | "json_object+schema" | "json_object" | "text"), ``schema_name``, ``fault`` (kind
applied or None) and ``status`` (HTTP status sent; None when dropped).

Run as a script: ``python -m rlm.testing.fake_server --port 8099`` serves the default
responder. The request helpers, replies and schema instances are in rlm.testing.wire.
"""

from __future__ import annotations

import argparse
import json
import socket
import threading
import time
from typing import Any, Callable

from rlm.testing.handler import Handler, HTTPServer
from rlm.testing.wire import (
    FAULT_KINDS,
    MODES,
    Fault,
    Reply,
    Responder,
    default_responder,
    estimate_tokens,
    prompt_text,
    request_mode,
    request_schema,
    request_schema_name,
    user_text,
    violating_instance,
)

# --------------------------------------------------------------------------- the server


class FakeServer:
    """Scripted OpenAI-compatible server. See the module docstring."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, model_name: str = "fake-model", api_key: str | None = None):
        self.host = host
        self.port = port
        self.model_name = model_name
        self.api_key = api_key  # when set, requests without "Authorization: Bearer <key>" get 401
        self.default: Responder = default_responder
        self._responders: dict[str, Responder] = {}
        self._faults: list[Fault] = []
        self._refused: dict[str, int] = {}
        self._requests: list[dict] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._conns: set[socket.socket] = set()
        self._httpd: HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._counter = 0

    # -- lifecycle
    def start(self) -> "FakeServer":
        if self._httpd is not None:
            return self
        self._stop.clear()
        httpd = HTTPServer((self.host, self.port), Handler)
        httpd.owner = self  # type: ignore[attr-defined]
        self._httpd = httpd
        self.port = httpd.server_address[1]
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, name=f"fake-server-{self.port}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._stop.set()  # wakes up "slow" answers
        httpd.shutdown()
        httpd.server_close()
        with self._lock:
            conns = list(self._conns)
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> "FakeServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    # -- scripting
    def on(self, schema_name: str, fn: Responder) -> None:
        with self._lock:
            self._responders[schema_name] = fn

    def fault(self, match: str, kind: str, times: int | None = None, **kw: Any) -> Fault:
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {kind!r}; expected one of {FAULT_KINDS}")
        f = Fault(match=match, kind=kind, times=times, kw=kw)
        with self._lock:
            self._faults.append(f)
        return f

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    def mode_refuse(self, mode: str, status: int = 500) -> None:
        """Refuse requests in a structured-output mode, like llama.cpp's server does for
        json_schema. ``mode``: "json_schema", "json_object" (with or without schema),
        "json_object+schema" (only with a schema) or "text"."""
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; expected one of {MODES}")
        with self._lock:
            self._refused[mode] = status

    def reset(self) -> None:
        """Forget requests, faults, refused modes and responders; restore the default responder."""
        with self._lock:
            self._requests.clear()
            self._faults.clear()
            self._refused.clear()
            self._responders.clear()
        self.default = default_responder

    @property
    def requests(self) -> list[dict]:
        with self._lock:
            return list(self._requests)

    def requests_matching(self, match: str) -> list[dict]:
        return [r for r in self.requests if match in r["user_text"]]

    # -- internals
    def _track(self, conn: socket.socket) -> None:
        with self._lock:
            self._conns.add(conn)

    def _untrack(self, conn: socket.socket) -> None:
        with self._lock:
            self._conns.discard(conn)

    def _take_fault(self, text: str) -> Fault | None:
        with self._lock:
            for f in self._faults:
                if f.match in text and (f.times is None or f.times > 0):
                    if f.times is not None:
                        f.times -= 1
                    f.hits += 1
                    return f
        return None

    def _refusal(self, mode: str) -> int | None:
        with self._lock:
            if mode in self._refused:
                return self._refused[mode]
            if mode == "json_object+schema" and "json_object" in self._refused:
                return self._refused["json_object"]
        return None

    def _foreign_string(self, prompt: str) -> str:
        while True:
            with self._lock:
                self._counter += 1
                n = self._counter
            s = f"fabricated quote #{n} that the chunk never said"
            if s not in prompt:
                return s

    def _replace_quotes(self, obj: Any, prompt: str) -> Any:
        if isinstance(obj, dict):
            return {k: (self._foreign_string(prompt) if k == "quote" else self._replace_quotes(v, prompt)) for k, v in obj.items()}
        if isinstance(obj, list):
            return [self._replace_quotes(v, prompt) for v in obj]
        return obj

    def _respond(self, req: dict, text: str) -> Any:
        name = request_schema_name(req)
        with self._lock:
            fn = self._responders.get(name) if name else None
        return (fn or self.default)(req, text)

    def _handle_chat(self, h: Handler, raw: bytes, path: str) -> None:
        try:
            req = json.loads(raw.decode("utf-8") or "{}")
            if not isinstance(req, dict):
                raise ValueError("body is not an object")
        except (ValueError, UnicodeDecodeError) as e:
            h.send_json(400, {"error": {"message": f"invalid JSON body: {e}", "type": "invalid_request_error", "code": 400}})
            return
        text = user_text(req)
        rec = {
            "t": time.time(),
            "path": path,
            "headers": {k.lower(): v for k, v in h.headers.items()},
            "body": req,
            "user_text": text,
            "mode": request_mode(req),
            "schema_name": request_schema_name(req),
            "fault": None,
            "status": None,
        }
        with self._lock:
            self._requests.append(rec)

        def send(status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
            rec["status"] = status
            h.send_json(status, obj, headers)

        if self.api_key is not None and h.headers.get("Authorization") != f"Bearer {self.api_key}":
            send(401, {"error": {"message": "Incorrect API key provided.", "type": "invalid_request_error", "code": "invalid_api_key"}})
            return
        refused = self._refusal(rec["mode"])
        if refused is not None:
            rf_type = (req.get("response_format") or {}).get("type", "text")
            send(refused, {"error": {"code": refused, "type": "server_error",
                                     "message": f'response_format type must be one of "text" or "json_object", but got: {rf_type}'}})
            return
        f = self._take_fault(text)
        rec["fault"] = f.kind if f else None
        if f is not None and self._fail_early(h, f, send):
            return
        result = self._result(req, text, f, send)
        if result is not None:
            self._send_reply(h, req, result, send)

    def _fail_early(self, h: Handler, f: Fault, send: Callable[..., None]) -> bool:
        """The faults that answer before any content: drop, 500, 429; "slow" waits first.
        True when the request was answered (or dropped)."""
        kw = f.kw
        if f.kind == "drop":
            h.drop()
            return True
        if f.kind == "500":
            status = int(kw.get("status", 500))
            send(status, {"error": {"message": kw.get("message", "injected server error"), "type": "server_error", "code": status}})
            return True
        if f.kind == "429":
            send(429, {"error": {"message": "Rate limit reached (injected)", "type": "rate_limit_error", "code": 429}},
                 {"Retry-After": str(kw.get("retry_after", "0"))})
            return True
        if f.kind == "slow" and self._stop.wait(float(kw.get("seconds", 5.0))):
            h.drop()
            return True
        return False

    def _result(self, req: dict, text: str, f: Fault | None, send: Callable[..., None]) -> Any:
        """The content to answer with: the responder's, or what a content fault puts instead.
        None when the responder raised (answered with a 500 already)."""
        kind, kw = (f.kind, f.kw) if f else (None, {})
        if kind == "malformed":
            return kw.get("content", '{"findings": [')
        if kind == "schema":
            return kw.get("content", violating_instance(request_schema(req)))
        try:
            result = self._respond(req, text)
        except Exception as e:  # a broken responder is a test bug: make it visible
            send(500, {"error": {"message": f"responder raised {type(e).__name__}: {e}", "type": "responder_error", "code": 500}})
            return None
        if kind == "badquote":
            prompt = prompt_text(req)
            if isinstance(result, Reply):
                result.content = self._replace_quotes(_maybe_json(result.content), prompt)
            else:
                result = self._replace_quotes(_maybe_json(result), prompt)
        return result

    def _send_reply(self, h: Handler, req: dict, result: Any, send: Callable[..., None]) -> None:
        reply = result if isinstance(result, Reply) else Reply(content=result)
        if reply.delay and self._stop.wait(reply.delay):
            h.drop()
            return
        if reply.body is not None:
            send(reply.status, reply.body, reply.headers)
            return
        content = reply.content if isinstance(reply.content, str) else json.dumps(reply.content)
        body: dict[str, Any] = {
            "id": f"chatcmpl-fake-{len(self._requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": req.get("model") or self.model_name,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": reply.finish_reason}],
        }
        if not reply.omit_usage:
            pt = estimate_tokens(prompt_text(req))
            ct = estimate_tokens(content)
            usage = reply.usage or {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct}
            body["usage"] = usage
        send(reply.status, body, reply.headers)


def _maybe_json(x: Any) -> Any:
    if isinstance(x, str):
        try:
            return json.loads(x)
        except ValueError:
            return x
    return x


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Scripted OpenAI-compatible fake server (default responder).")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--model-name", default="fake-model")
    ap.add_argument("--refuse", action="append", default=[], choices=MODES, help="refuse a response_format mode (HTTP 500)")
    args = ap.parse_args(argv)
    server = FakeServer(args.host, args.port, model_name=args.model_name).start()
    for m in args.refuse:
        server.mode_refuse(m)
    print(server.url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":
    main()
