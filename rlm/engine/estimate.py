"""Pre-flight time estimates from the model's profile (speed measured on this machine where the
model runs locally), and the overrun check progress uses: a run that takes 3x its estimate says
so while it runs, and the report says so at the end."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rlm.models.profile import profile_of
from rlm.engine.events import Event
from rlm.schemas.report import Estimate

GEN_TOKENS_PER_CALL = 80  # a third of a typical recipe's max_tokens, as measured on the recipes
OVERRUN_FACTOR = 3.0


@dataclass
class Estimated(Event):
    """The pre-flight estimate, sent before the first model call."""

    kind: ClassVar[str] = "estimate"
    seconds: float | None
    calls: int
    basis: str | None = None


def fill_seconds(model, est: Estimate) -> Estimate:
    """Set est.seconds and est.basis from the model's profile (None when its speed is unknown)."""
    prof = profile_of(model)
    if est.calls and prof.prompt_tps and prof.gen_tps:
        est.seconds = round(prof.seconds_for(est.prompt_tokens, est.calls, GEN_TOKENS_PER_CALL), 1)
        est.basis = prof.speed_source
    return est


def announce(ctx, est: Estimate) -> None:
    """Before a strategy's first model call: fill the seconds and tell the progress display."""
    if est.seconds is None:
        fill_seconds(ctx.session.model, est)
    ctx.emit(Estimated(est.seconds, est.calls, est.basis))


def overrun(elapsed: float, seconds: float | None, factor: float = OVERRUN_FACTOR) -> str | None:
    """'3.4x its estimate (~12 s)' once a run has taken `factor` times its estimate."""
    if not seconds or seconds <= 0 or elapsed < factor * seconds:
        return None
    return f"{elapsed / seconds:.1f}x its estimate (~{seconds:,.0f} s)"
