"""Warn before long runs: a pre-flight estimate over 10 minutes or 200 calls is said up front,
with the numbers and how to cap them, before the first model call.

The caller decides whether to go on (`RunOptions.confirm`): the CLI asks on a terminal and goes
on with --yes or when not on a terminal; a library or MCP caller without `confirm` goes on. The
warning is also one of the report's gate reasons, so it is never lost.
"""

from __future__ import annotations

from rlm.errors import UsageError
from rlm.models.profile import profile_of
from rlm.schemas.report import Estimate

LONG_CALLS = 200
LONG_SECONDS = 600.0
COMPLETION_TOKENS_PER_CALL = 80  # as rlm.pipeline.report assumes


def seconds(model, est: Estimate) -> float | None:
    speed = getattr(model, "speed", None)
    if speed and est.calls:
        return est.prompt_tokens / speed[0] + est.calls * COMPLETION_TOKENS_PER_CALL / speed[1]
    return profile_of(model).seconds_for(est.prompt_tokens, est.calls)


def warning(est: Estimate, secs: float | None, max_calls: int | None) -> str | None:
    """The warning for this plan, or None when it is not long (or already capped short)."""
    calls = est.calls if max_calls is None else min(est.calls, max_calls)
    if max_calls is not None and secs is not None and est.calls:
        secs = secs * calls / est.calls
    if calls <= LONG_CALLS and (secs is None or secs <= LONG_SECONDS):
        return None
    when = f", about {secs / 60:,.0f} minutes" if secs is not None else ""
    return (f"a long run: about {calls:,} model calls and {est.prompt_tokens:,} prompt tokens"
            f"{when}. To cap it: --max-calls N; --strategy grep or profile (code searches or "
            f"profiles, the model reads only the candidates); or a question with an anchor (a "
            f"quoted string or an id such as TXN-4444)")


def check(ctx, est: Estimate, reasons: list[str]) -> None:
    """Before the first model call of a strategy: warn, and stop when the caller says so."""
    if ctx.opts.dry_run:
        return
    msg = warning(est, seconds(ctx.session.model, est), ctx.opts.max_calls)
    if msg is None:
        return
    reasons.append(msg)
    confirm = getattr(ctx.opts, "confirm", None)
    if confirm is not None and not confirm(msg):
        raise UsageError("stopped before any model call: " + msg.split(". To cap it")[0])
