"""`rlm mcp`: the MCP server (official `mcp` SDK, MCPServer) over stdio or streamable HTTP.

stdout belongs to the protocol on stdio: rlm writes its warnings to stderr only.
"""

from __future__ import annotations

import functools
import logging
import warnings

from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp_types import ToolAnnotations

import rlm
from rlm.errors import UsageError
from rlm.mcp import descriptions as d
from rlm.mcp import rounds
from rlm.mcp.config import ServerConfig
from rlm.mcp.roots import Roots
from rlm.mcp.tools import RlmTools

LOOPBACK = ("127.0.0.1", "localhost", "::1")
INSTRUCTIONS = (
    "rlm answers questions about files and folders too big for your context (logs, transcripts, "
    "repositories) and reports honest coverage: what a model read, what code scanned, what failed. "
    "Prefer `ask` over reading a big file; use `grep` and `read_lines` to look at evidence lines; "
    "`resume` an incomplete run instead of starting over.")


def build_server(cfg: ServerConfig) -> MCPServer:
    # sampling and roots are deprecated in the 2026-07-28 spec; rlm uses them only where the
    # client offers them, and the warnings would only clutter stderr
    warnings.filterwarnings("ignore", category=MCPDeprecationWarning)
    tools = RlmTools(cfg)
    server = MCPServer("rlm", version=rlm.__version__, instructions=INSTRUCTIONS,
                       log_level="WARNING")
    read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
    model_run = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=True)
    for fn, desc, ann in ((tools.ask, d.ASK, model_run), (tools.audit, d.AUDIT, model_run),
                          (tools.mine, d.MINE, model_run), (tools.runs, d.RUNS, read_only),
                          (tools.show, d.SHOW, read_only), (tools.resume, d.RESUME, model_run),
                          (tools.grep, d.GREP, read_only),
                          (tools.read_lines, d.READ_LINES, read_only)):
        server.add_tool(_with_rounds(fn), name=fn.__name__, description=desc, annotations=ann)
    return server


def _with_rounds(fn):
    """The tool, answering this round's InputRequiredResult when it needs the client's input
    first (2026-07-28 connections: rlm.mcp.rounds). Same signature, for the SDK's schemas."""

    @functools.wraps(fn)
    async def tool(*args, **kwargs):
        try:
            return await fn(*args, **kwargs)
        except rounds.InputNeeded as e:
            return e.result

    return tool


def parse_http(spec: str) -> tuple[str, int]:
    host, sep, port = spec.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--http {spec!r}: expected HOST:PORT, e.g. 127.0.0.1:8765")
    return host.strip("[]"), int(port)


def serve(cfg: ServerConfig) -> None:
    """Run until the client disconnects (stdio) or the process is stopped (HTTP)."""
    import anyio

    server = build_server(cfg)
    logging.getLogger("mcp").setLevel(logging.WARNING)
    if cfg.http:
        import sys

        host, port = parse_http(cfg.http)
        roots = ", ".join(str(r) for r in Roots(cfg.roots).all)
        print(f"rlm mcp: streamable HTTP at http://{host}:{port}/mcp, reading under {roots}",
              file=sys.stderr, flush=True)
        if host not in LOOPBACK:
            print(f"rlm mcp: warning: {host} is not a loopback address and this server has no "
                  "authentication: anyone who can reach it can read under the roots",
                  file=sys.stderr, flush=True)
        anyio.run(lambda: server.run_streamable_http_async(host=host, port=port))
    else:
        anyio.run(server.run_stdio_async)
