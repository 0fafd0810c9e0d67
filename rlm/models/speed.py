"""Model speed measured on this machine, for honest pre-flight estimates.

A local model times its own calls (time to the first token = reading the prompt; the rest =
generating) and keeps a running average in ``<config dir>/speed/<model>.json`` (env
``RLM_CONFIG_DIR`` overrides the directory). Estimates use it when it exists and say when they
fall back to the shipped default instead.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

import orjson

WEIGHT_NEW = 0.3  # running average: how much one run's measurement moves the stored figure


@dataclass
class Speed:
    prompt_tps: float
    gen_tps: float
    calls: int = 0
    measured_at: float = 0.0
    gen_per_call: float | None = None  # completion tokens a call generates, on average

    @property
    def source(self) -> str:
        when = time.strftime("%Y-%m-%d", time.localtime(self.measured_at)) if self.measured_at else "?"
        return f"measured on this machine ({self.calls} calls, last {when})"


def speed_path(model_name: str) -> Path:
    from rlm.models.config import config_dir

    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", model_name)[:120].strip("._") or "model"
    return config_dir() / "speed" / f"{slug}.json"


def load(model_name: str) -> Speed | None:
    try:
        d = orjson.loads(speed_path(model_name).read_bytes())
        return Speed(float(d["prompt_tps"]), float(d["gen_tps"]), int(d.get("calls", 0)),
                     float(d.get("measured_at", 0)), d.get("gen_per_call"))
    except (OSError, ValueError, KeyError, TypeError, orjson.JSONDecodeError):
        return None


class SpeedMeter:
    """Accumulates one model's timings during a run; `save()` folds them into the stored average."""

    def __init__(self, model_name: str):
        self.model_name = model_name
        self.prompt_tokens = self.gen_tokens = self.calls = 0
        self.prompt_s = self.gen_s = 0.0
        self.warm = False

    def add(self, prompt_tokens: int, prompt_s: float, gen_tokens: int, gen_s: float) -> None:
        """One call's timings. The first call of a process is warm-up (weights paged in,
        grammar built) and is not counted."""
        if not self.warm:
            self.warm = True
            return
        if prompt_s <= 0 or prompt_tokens <= 0:
            return
        self.calls += 1
        self.prompt_tokens += prompt_tokens
        self.prompt_s += prompt_s
        if gen_tokens > 1 and gen_s > 0:
            self.gen_tokens += gen_tokens
            self.gen_s += gen_s

    def current(self) -> Speed | None:
        if not self.calls or not self.gen_s:
            return None
        return Speed(self.prompt_tokens / self.prompt_s, self.gen_tokens / self.gen_s, self.calls,
                     time.time(), self.gen_tokens / self.calls)

    def save(self) -> Speed | None:
        new = self.current()
        if new is None:
            return None
        old = load(self.model_name)
        if old is not None:
            w = WEIGHT_NEW
            gpc = new.gen_per_call if old.gen_per_call is None else \
                old.gen_per_call * (1 - w) + new.gen_per_call * w
            new = Speed(old.prompt_tps * (1 - w) + new.prompt_tps * w,
                        old.gen_tps * (1 - w) + new.gen_tps * w, old.calls + new.calls, time.time(),
                        gpc)
        p = speed_path(self.model_name)
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
            tmp = p.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_bytes(orjson.dumps({"prompt_tps": round(new.prompt_tps, 1),
                                          "gen_tps": round(new.gen_tps, 1), "calls": new.calls,
                                          "gen_per_call": round(new.gen_per_call or 0, 1) or None,
                                          "measured_at": new.measured_at}))
            tmp.replace(p)
        except OSError:
            return None  # an estimate is not worth failing a run for
        self.prompt_tokens = self.gen_tokens = self.calls = 0
        self.prompt_s = self.gen_s = 0.0
        return new
