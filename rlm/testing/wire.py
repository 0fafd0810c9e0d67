"""What goes over the wire to the fake OpenAI-compatible server: the request helpers (the user
text, the structured-output mode and schema a request asks for), scripted replies and faults,
and instances of a JSON schema (a minimal valid one, a violating one)."""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
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
