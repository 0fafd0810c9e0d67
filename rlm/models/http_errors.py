"""Reading a failed HTTP exchange with a model server: the server's own error message, its
Retry-After, a short human cause for a failed connect, and whether it says the prompt is too long."""

from __future__ import annotations

import errno
import re
import socket
from email.utils import parsedate_to_datetime

import httpx
import orjson

RETRY_AFTER_CAP = 10.0

_CONTEXT_ERROR = re.compile(r"context.?(length|window|size)|maximum context|too many tokens|"
                            r"prompt is too long|input is too long|exceeds? the available context|"
                            r"reduce the length", re.I)


def _short(text: str, n: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _error_message(resp: httpx.Response) -> str:
    try:
        data = orjson.loads(resp.content)
    except orjson.JSONDecodeError:
        return _short(resp.text or "")
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict):
            return _short(str(err.get("message") or err.get("detail") or err))
        if isinstance(err, str):
            return _short(err)
        if "detail" in data:
            return _short(str(data["detail"]))
    return _short(str(data))


def _retry_after(resp: httpx.Response) -> float | None:
    v = resp.headers.get("retry-after")
    if v is None:
        return None
    v = v.strip()
    try:
        secs = float(v)
    except ValueError:
        try:
            import datetime as _dt

            when = parsedate_to_datetime(v)
            secs = (when - _dt.datetime.now(when.tzinfo)).total_seconds()
        except (TypeError, ValueError):
            return None
    return max(0.0, min(secs, RETRY_AFTER_CAP))


def _conn_cause(exc: BaseException) -> str:
    """A short human cause for a failed connect, from the exception chain."""
    chain: list[BaseException] = []
    x: BaseException | None = exc
    while x is not None and len(chain) < 10:
        chain.append(x)
        x = x.__cause__ or x.__context__
    for x in chain:
        if isinstance(x, ConnectionRefusedError) or getattr(x, "errno", None) == errno.ECONNREFUSED:
            return "connection refused"
        if isinstance(x, socket.gaierror):
            return "host name not found"
        if getattr(x, "errno", None) == errno.EHOSTUNREACH:
            return "no route to host"
        if getattr(x, "errno", None) == errno.ENETUNREACH:
            return "network unreachable"
    if isinstance(exc, httpx.ConnectTimeout):
        return "connect timed out"
    msg = str(chain[-1]) or str(exc) or type(exc).__name__
    msg = re.sub(r"^\[Errno -?\d+\]\s*", "", msg)
    low = msg.lower()
    if "refused" in low:
        return "connection refused"
    if "name or service not known" in low or "nodename nor servname" in low or "name resolution" in low:
        return "host name not found"
    return _short(msg, 100)
