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

Run as a script: ``python tests/fake_server.py --port 8099`` serves the default responder.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

FAULT_KINDS = ("500", "429", "slow", "malformed", "schema", "badquote", "drop")
MODES = ("json_schema", "json_object+schema", "json_object", "text")


@dataclass
class Reply:
    """Full control over one answer. ``content`` (dict/list → JSON, str → verbatim) becomes the
    assistant message; ``body`` (dict or bytes) replaces the whole response body instead."""

    content: Any = ""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    usage: dict[str, int] | None = None  # overrides the chars/4 estimate
    omit_usage: bool = False
    finish_reason: str = "stop"
    delay: float = 0.0  # seconds to wait before answering


@dataclass
class Fault:
    match: str
    kind: str
    times: int | None = None  # remaining; None = forever
    kw: dict[str, Any] = field(default_factory=dict)
    hits: int = 0


Responder = Callable[[dict, str], Any]


# --------------------------------------------------------------------------- request helpers


def _text_of(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content)


def user_text(req: dict) -> str:
    """The text of the last user message of a request body."""
    for msg in reversed(req.get("messages") or []):
        if isinstance(msg, dict) and msg.get("role") == "user":
            return _text_of(msg.get("content"))
    return ""


def prompt_text(req: dict) -> str:
    return "\n".join(_text_of(m.get("content")) for m in req.get("messages") or [] if isinstance(m, dict))


def request_mode(req: dict) -> str:
    rf = req.get("response_format")
    if not isinstance(rf, dict):
        return "text"
    t = rf.get("type")
    if t == "json_schema":
        return "json_schema"
    if t == "json_object":
        return "json_object+schema" if isinstance(rf.get("schema"), dict) else "json_object"
    return "text"


def request_schema(req: dict) -> dict | None:
    """The JSON schema a request asks for, if any."""
    rf = req.get("response_format")
    if not isinstance(rf, dict):
        return None
    if rf.get("type") == "json_schema":
        js = rf.get("json_schema") or {}
        s = js.get("schema")
        return s if isinstance(s, dict) else None
    s = rf.get("schema")
    return s if isinstance(s, dict) else None


def request_schema_name(req: dict) -> str | None:
    rf = req.get("response_format")
    if not isinstance(rf, dict):
        return None
    if rf.get("type") == "json_schema":
        return (rf.get("json_schema") or {}).get("name")
    s = rf.get("schema")
    if isinstance(s, dict):
        return s.get("title")
    return None


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / 4) if text else 0


# --------------------------------------------------------------------------- schema instances


def _resolve_ref(ref: str, root: dict) -> dict:
    if not ref.startswith("#/"):
        return {}
    node: Any = root
    for part in ref[2:].split("/"):
        if not isinstance(node, dict):
            return {}
        node = node.get(part.replace("~1", "/").replace("~0", "~"), {})
    return node if isinstance(node, dict) else {}


def minimal_instance(schema: Any, root: dict | None = None, depth: int = 0) -> Any:
    """A small instance that satisfies common JSON schemas: empty arrays (or minItems items),
    "" strings (or minLength "x"s), 0 numbers (or the minimum), False, the first enum value."""
    if not isinstance(schema, dict):
        return {}
    root = root if root is not None else schema
    if depth > 24:
        return None
    if "$ref" in schema:
        return minimal_instance(_resolve_ref(schema["$ref"], root), root, depth + 1)
    if "const" in schema:
        return copy.deepcopy(schema["const"])
    if schema.get("enum"):
        return copy.deepcopy(schema["enum"][0])
    if "default" in schema:
        return copy.deepcopy(schema["default"])
    for key in ("anyOf", "oneOf", "allOf"):
        alts = schema.get(key)
        if isinstance(alts, list) and alts:
            non_null = [a for a in alts if not (isinstance(a, dict) and a.get("type") == "null")]
            return minimal_instance((non_null or alts)[0], root, depth + 1)
    t = schema.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), t[0] if t else None)
    if t is None:
        if "properties" in schema:
            t = "object"
        elif "items" in schema:
            t = "array"
        else:
            return {}
    if t == "object":
        props = schema.get("properties") or {}
        required = set(schema.get("required") or [])
        out = {}
        for name, sub in props.items():
            if name in required or depth < 6:
                out[name] = minimal_instance(sub, root, depth + 1)
        return out
    if t == "array":
        n = int(schema.get("minItems") or 0)
        return [minimal_instance(schema.get("items") or {}, root, depth + 1) for _ in range(n)]
    if t == "string":
        return "x" * int(schema.get("minLength") or 0)
    if t in ("integer", "number"):
        if "minimum" in schema:
            v = schema["minimum"]
        elif "exclusiveMinimum" in schema and not isinstance(schema["exclusiveMinimum"], bool):
            v = schema["exclusiveMinimum"] + 1
        else:
            v = 0
        return int(math.ceil(v)) if t == "integer" else v
    if t == "boolean":
        return False
    if t == "null":
        return None
    return {}


def _wrong_value(sub: Any, root: dict) -> Any:
    if isinstance(sub, dict) and "$ref" in sub:
        sub = _resolve_ref(sub["$ref"], root)
    if not isinstance(sub, dict):
        return "nope"
    if "enum" in sub:
        return "not-an-allowed-value"
    t = sub.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), None)
    return 12345 if t == "string" else "nope"


def violating_instance(schema: dict | None) -> Any:
    """Valid JSON that does not validate against ``schema`` (every property has the wrong type)."""
    if isinstance(schema, dict) and "$ref" in schema:
        target = _resolve_ref(schema["$ref"], schema)
        schema = {**target, "$defs": schema.get("$defs", {}), "definitions": schema.get("definitions", {})}
    props = (schema or {}).get("properties") if isinstance(schema, dict) else None
    if not props:
        return {"findings": "nope"}
    return {name: _wrong_value(sub, schema) for name, sub in props.items()}


def default_responder(req: dict, user_text: str) -> Any:
    schema = request_schema(req)
    return minimal_instance(schema) if schema else {}


# --------------------------------------------------------------------------- the server


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256  # fan-out tests open many connections at once

    def handle_error(self, request, client_address):  # quiet: clients hang up on purpose
        pass


class _Handler(BaseHTTPRequestHandler):
    disable_nagle_algorithm = True  # answer at once: Nagle + delayed ACK cost ~40 ms a reply
    protocol_version = "HTTP/1.1"
    server_version = "FakeOpenAI/1.0"
    timeout = 60  # idle keep-alive connections are closed after this

    def log_message(self, format, *args):  # noqa: A002
        pass

    @property
    def owner(self) -> "FakeServer":
        return self.server.owner  # type: ignore[attr-defined]

    def setup(self):
        super().setup()
        self.owner._track(self.connection)

    def finish(self):
        try:
            super().finish()
        except OSError:
            pass
        finally:
            self.owner._untrack(self.connection)

    # -- responses
    def send_json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        data = obj if isinstance(obj, (bytes, bytearray)) else json.dumps(obj).encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, str(v))
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:  # the client gave up (e.g. it timed out on a slow answer)
            self.close_connection = True

    def drop(self) -> None:
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def do_GET(self):  # noqa: N802
        path = self.path.split("?", 1)[0].rstrip("/")
        key = self.owner.api_key
        if key is not None and self.headers.get("Authorization") != f"Bearer {key}":
            self.send_json(401, {"error": {"message": "Incorrect API key provided.", "type": "invalid_request_error", "code": "invalid_api_key"}})
            return
        if path in ("/v1/models", "/models"):
            self.send_json(200, {"object": "list", "data": [{"id": self.owner.model_name, "object": "model", "created": 0, "owned_by": "fake"}]})
        elif path in ("/health", "/v1/health"):
            self.send_json(200, {"status": "ok"})
        else:
            self.send_json(404, {"error": {"message": f"no route {path}", "type": "not_found", "code": 404}})

    def do_POST(self):  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = self.path.split("?", 1)[0].rstrip("/")
        if path not in ("/v1/chat/completions", "/chat/completions"):
            self.send_json(404, {"error": {"message": f"no route {path}", "type": "not_found", "code": 404}})
            return
        self.owner._handle_chat(self, raw, path)


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
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._counter = 0

    # -- lifecycle
    def start(self) -> "FakeServer":
        if self._httpd is not None:
            return self
        self._stop.clear()
        httpd = _HTTPServer((self.host, self.port), _Handler)
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

    def _handle_chat(self, h: _Handler, raw: bytes, path: str) -> None:
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
        kind = f.kind if f else None
        kw = f.kw if f else {}
        rec["fault"] = kind
        if kind == "drop":
            h.drop()
            return
        if kind == "500":
            status = int(kw.get("status", 500))
            send(status, {"error": {"message": kw.get("message", "injected server error"), "type": "server_error", "code": status}})
            return
        if kind == "429":
            send(429, {"error": {"message": "Rate limit reached (injected)", "type": "rate_limit_error", "code": 429}},
                 {"Retry-After": str(kw.get("retry_after", "0"))})
            return
        if kind == "slow":
            if self._stop.wait(float(kw.get("seconds", 5.0))):
                h.drop()
                return

        if kind == "malformed":
            result: Any = kw.get("content", '{"findings": [')
        elif kind == "schema":
            result = kw.get("content", violating_instance(request_schema(req)))
        else:
            try:
                result = self._respond(req, text)
            except Exception as e:  # a broken responder is a test bug: make it visible
                send(500, {"error": {"message": f"responder raised {type(e).__name__}: {e}", "type": "responder_error", "code": 500}})
                return
            if kind == "badquote":
                prompt = prompt_text(req)
                if isinstance(result, Reply):
                    result.content = self._replace_quotes(_maybe_json(result.content), prompt)
                else:
                    result = self._replace_quotes(_maybe_json(result), prompt)

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
