"""Model text to JSON, leniently: ``` fences stripped, the outermost {...} or [...] as a last
resort (used by every backend whose reply is text: HTTP servers, MCP sampling)."""

from __future__ import annotations

import re
from typing import Any

import orjson


def strip_fences(text: str) -> str:
    t = text.strip()
    m = re.match(r"^```[a-zA-Z0-9_-]*\s*\n?(.*?)\n?```\s*$", t, re.S)
    if m:
        return m.group(1).strip()
    m = re.search(r"```(?:json|JSON)?\s*\n(.*?)\n```", t, re.S)
    if m:
        return m.group(1).strip()
    return t


def parse_json_text(text: str) -> Any | None:
    """Parse model output as JSON: strips ``` fences; as a last resort takes the outermost
    {...} or [...] span. Returns None when it is not JSON."""
    if not text:
        return None
    t = strip_fences(text)
    try:
        return orjson.loads(t)
    except orjson.JSONDecodeError:
        pass
    for open_, close in (("{", "}"), ("[", "]")):
        i, j = t.find(open_), t.rfind(close)
        if 0 <= i < j:
            try:
                return orjson.loads(t[i : j + 1])
            except orjson.JSONDecodeError:
                continue
    return None
