"""Model server URLs as they may be shown: without credentials or a query string. Kept apart from
the HTTP client so that what only shows a URL (--version, `rlm models`) loads no HTTP stack."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit


def redact_url(url: str) -> str:
    """The URL without user:password@ and without a query string (which may hold a key)."""
    try:
        p = urlsplit(url)
    except ValueError:
        return "<invalid url>"
    host = p.hostname or ""
    if p.port:
        host = f"{host}:{p.port}"
    return urlunsplit((p.scheme, host, p.path, "", ""))
