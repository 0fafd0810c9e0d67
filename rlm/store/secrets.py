"""Keeping secrets out of the databases: argv redaction and scrubbing of every string written."""

from __future__ import annotations

import os
import re
from typing import Any

import orjson

_SECRET_ENV = re.compile(r"(KEY|TOKEN|SECRET|PASSW|AUTH|CREDENTIAL)", re.IGNORECASE)
_SECRET_FLAG = re.compile(r"^--?[\w-]*(api[-_]?key|key|token|secret|passw(or)?d?|auth\w*|credential\w*)$",
                          re.IGNORECASE)
_SECRET_SHAPES = re.compile(r"(\bsk-[A-Za-z0-9_\-]{8,}|\bBearer\s+[A-Za-z0-9._~+/=\-]{8,})")

def secret_values(extra: list[str | None] | None = None) -> list[str]:
    """Values that must never be written: secret-looking env vars and explicit keys."""
    vals = {v for k, v in os.environ.items()
            if _SECRET_ENV.search(k) and v and len(v.strip()) >= 6 and v.strip()[0] not in "/~."}
    vals |= {v for v in (extra or []) if v and len(v) >= 4}
    return sorted((v.strip() for v in vals), key=len, reverse=True)


def scrub(text: str, secrets: list[str], masks: list[tuple[str, str]] = ()) -> str:
    """text without API keys and secret-looking env values (***), and with the values in
    ``masks`` (what the user typed, when the run redacts: rlm.redact.record_mask) replaced."""
    for value, ph in masks:
        if value and value in text:
            text = text.replace(value, ph)
    for s in secrets:
        if s and s in text:
            text = text.replace(s, "***")
    return _SECRET_SHAPES.sub("***", text)


def redact_url(url: str | None) -> str | None:
    if not url:
        return url
    from rlm.models.urls import redact_url

    return redact_url(url)


def redact_argv(argv: list[str], secrets: list[str] | None = None) -> list[str]:
    """argv without secrets: values of key-like options become ***, URLs lose credentials."""
    secrets = secret_values() if secrets is None else secrets
    out: list[str] = []
    hide_next = url_next = False
    for a in argv:
        if hide_next:
            out.append("***")
            hide_next = False
            continue
        if url_next:
            out.append(redact_url(a) or a)
            url_next = False
            continue
        flag, eq, val = a.partition("=")
        if a.startswith("-") and _SECRET_FLAG.match(flag):
            if eq:
                out.append(f"{flag}=***")
            else:
                out.append(a)
                hide_next = True
            continue
        if a.startswith("-") and flag == "--base-url":
            if eq:
                out.append(f"{flag}={redact_url(val)}")
            else:
                out.append(a)
                url_next = True
            continue
        if re.match(r"^https?://", a):
            a = redact_url(a) or a
        out.append(scrub(a, secrets))
    return out


def dumps(obj: Any, secrets: list[str], masks: list[tuple[str, str]] = ()) -> str:
    return scrub(orjson.dumps(obj, default=_default).decode(), secrets, masks)


def _default(o: Any) -> Any:
    if hasattr(o, "model_dump"):
        return o.model_dump(mode="json")
    if isinstance(o, (set, tuple)):
        return list(o)
    return str(o)  # a record must never fail on an odd value


