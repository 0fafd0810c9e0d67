"""The options every command shares (ask, audit, mine), so that each flag means the same
everywhere. A command's own options subclass :class:`RunOptions`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass
class RunOptions:
    """What every run takes (ask, audit, mine): the model and its server, the budget, redaction,
    the call cache and resume. Each flag means the same on every command."""

    model: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    sub_model: str | None = None  # the sub-calls (map, judge, merge, repository jobs); same server
    concurrency: int = 4
    max_tokens: int | None = None  # token budget of the whole run
    max_calls: int | None = None  # call budget of the whole run
    max_wall_s: float | None = None
    timeout: float = 120.0  # seconds per model request
    dry_run: bool = False  # probe, plan and estimate; no model call
    usable_fraction: float = 0.75  # of the model context, for one call's material (until calibrated)
    command: str = "ask"
    no_cache: bool = False  # fresh model calls (answers are still stored, for resume)
    resume: str | None = None  # run id (prefix, or "last") whose answered calls are reused
    argv: list[str] | None = None  # the command line, for the run record (secrets redacted)
    redact: bool | None = None  # None: decided by RLM_REDACT, config, endpoint (rlm.redact.model)
    redact_report: bool = False  # also mask the local report and the run record
    executor: str | None = None  # local | ray; None: RLM_EXECUTOR, config, local (rlm.executor)
    ray_address: str | None = None  # HOST:PORT of a Ray cluster; None: RAY_ADDRESS or a local one
    # asked before a long run (rlm.engine.longrun) with the warning; False stops it. None: go on
    confirm: Callable[[str], bool] | None = None
