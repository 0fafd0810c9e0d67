"""Calibration profiles: one JSON file per model name, and the usable window they give the gate.

A breakpoint is the largest fill level whose accuracy is >= THRESHOLD *and* every smaller
level's too; the usable window for one call is WINDOW_SHARE of the synthesis breakpoint.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

CONFIG_ENV = "RLM_CONFIG_DIR"
PROFILE_VERSION = 1
THRESHOLD = 0.9  # accuracy a fill level needs to count as usable
WINDOW_SHARE = 0.8  # usable window = this share of the synthesis breakpoint


def config_dir() -> Path:
    v = os.environ.get(CONFIG_ENV, "").strip()
    if v:
        return Path(v).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir("rlm", appauthor=False))


def _slug(name: str) -> str:
    s = re.sub(r"[^A-Za-z0-9._-]+", "_", name.strip())[:120].strip("._")
    return s or "model"


def profile_path(model_name: str) -> Path:
    return config_dir() / "profiles" / f"{_slug(model_name)}.json"


def load_profile(model_name: str) -> dict | None:
    """The saved profile for this model name, or None (missing or unreadable)."""
    p = profile_path(model_name)
    try:
        data = json.loads(p.read_text("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("model") != model_name:
        return None
    data["_path"] = str(p)
    return data


def save_profile(profile: dict) -> Path:
    p = profile_path(profile["model"])
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_suffix(".json.tmp")
    tmp.write_text(json.dumps({k: v for k, v in profile.items() if not k.startswith("_")},
                              indent=2) + "\n", "utf-8")
    tmp.replace(p)
    return p


def profile_window(model_name: str, context_tokens: int) -> tuple[int | None, str] | None:
    """(usable prompt tokens per call, a reason line) from the model's profile; None without one.

    The window is None when the profile has none (synthesis never reached 90%): the caller keeps
    its default and the reason line says why."""
    prof = load_profile(model_name) if model_name else None
    if prof is None:
        return None
    where = prof.get("_path", "")
    when = str(prof.get("created", ""))[:10]
    win = prof.get("usable_window_tokens")
    if not isinstance(win, int) or win <= 0:
        return None, (f"calibrated profile {where} ({when}): synthesis never reached "
                      f"{THRESHOLD:.0%} accuracy at any fill tested, so the default window is kept")
    win = min(win, int(context_tokens * 0.97))
    bp = (prof.get("synthesis_breakpoint") or {}).get("tokens")
    return win, (f"calibrated profile {where} ({when}): usable window {win:,} prompt tokens per "
                 f"call = {WINDOW_SHARE:.0%} of the synthesis breakpoint ({bp:,} tokens)")
