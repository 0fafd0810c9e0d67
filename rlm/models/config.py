"""The user config file (`rlm config set model ...`, `rlm config show`).

A small JSON file, ``config.json`` in the platformdirs user config dir (env ``RLM_CONFIG_DIR``
overrides, as for calibration profiles). Only model choice lives here; API keys never do (they
come from the environment), so the file can be shown and shared safely.
"""

from __future__ import annotations

import os
from pathlib import Path

import orjson

from rlm.errors import UsageError

KEYS = {
    "model": "model spec: none | local | openai:NAME | NAME (with base_url)",
    "base_url": "OpenAI-compatible endpoint(s), comma-separated for replicas",
    "redact": "on | off: replace secrets and personal data in prompts (default: on for "
              "non-loopback endpoints)",
    "executor": "local | ray: where scans and sub-calls run (ray: the rlm[ray] extra)",
}


def config_dir() -> Path:
    v = os.environ.get("RLM_CONFIG_DIR")
    if v:
        return Path(v).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir("rlm", appauthor=False))


def config_path() -> Path:
    return config_dir() / "config.json"


def load() -> dict[str, str]:
    """The saved settings; a missing file is empty, a broken one is a clear usage error."""
    p = config_path()
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as e:
        raise UsageError(f"cannot read {p}: {e.strerror or e}") from None
    try:
        data = orjson.loads(raw) if raw.strip() else {}
    except orjson.JSONDecodeError:
        raise UsageError(f"{p} is not valid JSON: fix or delete it (rlm config unset KEY)") from None
    if not isinstance(data, dict):
        raise UsageError(f"{p}: expected a JSON object")
    return {k: str(v) for k, v in data.items() if k in KEYS and v is not None}


def _save(data: dict[str, str]) -> Path:
    p = config_path()
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_suffix(".tmp")
        tmp.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n")
        tmp.replace(p)
    except OSError as e:
        raise UsageError(f"cannot write {p}: {e.strerror or e}") from None
    return p


def set_value(key: str, value: str) -> Path:
    if key not in KEYS:
        raise UsageError(f"unknown config key {key!r} (known: {', '.join(KEYS)})")
    value = value.strip()
    if not value:
        raise UsageError(f"config {key}: empty value (use `rlm config unset {key}`)")
    if "@" in value.split("//", 1)[-1].split("/", 1)[0]:
        raise UsageError(f"config {key}: credentials in a URL are not stored; use RLM_API_KEY")
    if key == "executor" and value.lower() not in ("local", "ray"):
        raise UsageError(f"config executor: expected local or ray, not {value!r}")
    if key == "executor":
        value = value.lower()
    if key == "redact":
        value = "on" if parse_switch(value, "config redact") else "off"
    data = load()
    data[key] = value
    return _save(data)


def unset(key: str) -> Path:
    if key not in KEYS:
        raise UsageError(f"unknown config key {key!r} (known: {', '.join(KEYS)})")
    data = load()
    data.pop(key, None)
    return _save(data)


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def parse_switch(value: str, where: str) -> bool:
    v = value.strip().lower()
    if v in _TRUE:
        return True
    if v in _FALSE:
        return False
    raise UsageError(f"{where}={value!r}: expected on or off (1/0, true/false, yes/no)")
