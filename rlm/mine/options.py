"""Options of `rlm mine` (the same meaning as ask's where the names are the same)."""

from __future__ import annotations

from dataclasses import dataclass

ONE_CALL_MAX_FILES = 30


@dataclass
class MineOptions:
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    concurrency: int = 4
    max_tokens: int | None = None
    max_calls: int | None = None
    max_wall_s: float | None = None
    timeout: float = 120.0
    dry_run: bool = False
    no_cache: bool = False  # fresh calls (answers still stored)
    usable_fraction: float = 0.5
    chunk_chars: int | None = None
    one_call_max_files: int = ONE_CALL_MAX_FILES
    weak_model: bool | None = None  # None: the embedded model is weak (its claims are checked)
    redact: bool | None = None  # None: RLM_REDACT, config, or on for non-loopback endpoints
    command: str = "mine"  # for the run record
    resume: str | None = None  # a recorded run to finish: its answered calls come from the cache
    argv: list[str] | None = None  # the command line, for the run record (secrets redacted)
