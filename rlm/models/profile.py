"""What rlm knows about a model, declared instead of sniffed from its name (pydantic-ai style).

A `ModelProfile` travels with every model: the tier it belongs to (none, served, local,
sampling), its context window, its speed (measured on this machine for local models, stored
by rlm.models.speed), the structured-output mode an endpoint confirmed, and whether it is weak
(a small model that gets only bounded tasks). Pre-flight estimates and the strategies read it;
nothing compares model names.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

TIERS = ("none", "served", "local", "sampling")


@dataclass
class ModelProfile:
    tier: str = "served"  # one of TIERS
    context_tokens: int = 8192
    prompt_tps: float | None = None  # prompt tokens per second (measured), None when unknown
    gen_tps: float | None = None  # generated tokens per second (schema-constrained)
    speed_source: str = "unknown"  # "measured on this machine <date>", "default", "unknown"
    structured_output: str | None = None  # json_schema | json_object+schema | json_object | text | grammar
    weak: bool = False  # bounded tasks only (labels from an enum, a few words)
    call_timeout_s: float | None = None  # per-call time limit (local generation)
    gen_per_call: float | None = None  # measured completion tokens per call, when known
    extra: dict[str, Any] = field(default_factory=dict)

    def with_(self, **kw: Any) -> "ModelProfile":
        return replace(self, **kw)

    def seconds_for(self, prompt_tokens: int, calls: int, gen_tokens_per_call: int = 80) -> float | None:
        """Pre-flight time for `calls` calls reading `prompt_tokens` in total; None without
        speed. Generated tokens per call: as measured, else `gen_tokens_per_call`."""
        if not self.prompt_tps or not self.gen_tps:
            return None
        gen = self.gen_per_call or gen_tokens_per_call
        return prompt_tokens / self.prompt_tps + calls * gen / self.gen_tps


def profile_of(model: Any) -> ModelProfile:
    """The model's profile; models without one are served models of their declared context."""
    p = getattr(model, "profile", None)
    if isinstance(p, ModelProfile):
        return p
    inner = getattr(model, "inner", None)  # CachedModel and other wrappers
    if inner is not None and inner is not model:
        return profile_of(inner)
    return ModelProfile(tier="served", context_tokens=int(getattr(model, "context_tokens", 8192)))


def is_code_only(model: Any) -> bool:
    return model is None or profile_of(model).tier == "none"
