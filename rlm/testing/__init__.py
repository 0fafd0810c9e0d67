"""Test doubles that are real parts, supported for rlm's own tests, its evals and library users:

- ``FakeServer``: a scripted OpenAI-compatible chat-completions server on 127.0.0.1 with fault
  injection (500, 429, slow, malformed, schema, badquote, drop) and refused structured-output
  modes (like llama.cpp's server). Stdlib only; see rlm.testing.fake_server.
- ``ScriptedModel``: the Model protocol in-process, answering by schema name.
- the request helpers (``user_text``, ``prompt_text``, ...) and schema instances
  (``minimal_instance``, ``violating_instance``) both use; rlm.testing.mcp_client drives
  ``rlm mcp`` with the MCP SDK's own client.
- ``run_cli``: the `rlm` command line in this process (typer's CliRunner), returning what a
  subprocess would; a real process only where it is the point (signals, stdio, the entry point).
"""

from rlm.testing.cli import run_cli
from rlm.testing.fake_server import FakeServer
from rlm.testing.scripted import ScriptedCall, ScriptedModel
from rlm.testing.wire import (
    FAULT_KINDS,
    MODES,
    Fault,
    Reply,
    default_responder,
    minimal_instance,
    prompt_text,
    request_mode,
    request_schema,
    request_schema_name,
    user_text,
    violating_instance,
)

__all__ = ["FAULT_KINDS", "MODES", "FakeServer", "Fault", "Reply", "ScriptedCall",
           "ScriptedModel", "default_responder", "minimal_instance", "prompt_text",
           "request_mode", "request_schema", "request_schema_name", "run_cli", "user_text",
           "violating_instance"]
