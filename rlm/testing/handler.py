"""The HTTP side of the fake server: a threading HTTP/1.1 server and its request handler, which
routes GET /models and /health, and hands POST /chat/completions to the owning FakeServer."""

from __future__ import annotations

import json
import socket
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rlm.testing.fake_server import FakeServer


class HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256  # fan-out tests open many connections at once

    def handle_error(self, request, client_address):  # quiet: clients hang up on purpose
        pass


class Handler(BaseHTTPRequestHandler):
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
