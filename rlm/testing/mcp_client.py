"""Drive the real `rlm mcp` server (a subprocess) with the official SDK's own client."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from typing import Any, AsyncIterator

from mcp import Client, StdioServerParameters


def server_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("RLM_MODEL", "RLM_BASE_URL", "RLM_API_KEY", "OPENAI_API_KEY")}
    env["PYTHONUNBUFFERED"] = "1"
    return env


def server_args(roots: list[str], *extra: str) -> list[str]:
    args = ["-m", "rlm.cli", "mcp", "--timeout", "10"]
    for r in roots:
        args += ["--root", str(r)]
    return args + list(extra)


@contextlib.asynccontextmanager
async def connect(roots: list[str], *extra: str, **client_kw: Any) -> AsyncIterator[Client]:
    params = StdioServerParameters(command=sys.executable, args=server_args(roots, *extra),
                                   env=server_env(), cwd=str(roots[0]) if roots else None)
    async with Client(params, read_timeout_seconds=120, **client_kw) as client:
        yield client


def fake_model(server) -> tuple[str, ...]:
    return ("--model", "fake", "--base-url", server.url)


def text_of(result) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


def structured(result) -> dict:
    assert not result.is_error, text_of(result)
    data = result.structured_content
    if data is None:  # some transports only carry the text: it is the same JSON then
        data = json.loads(text_of(result))
    return data
