"""Options of `rlm audit` (the same meaning as ask's where the names are the same)."""

from __future__ import annotations

from dataclasses import dataclass

from rlm.audit.lenses import LENSES
from rlm.errors import UsageError


@dataclass
class AuditOptions:
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    concurrency: int = 4
    max_tokens: int | None = None  # token budget of the whole run
    max_calls: int | None = None
    max_wall_s: float | None = None
    timeout: float = 120.0
    lenses: tuple[str, ...] = LENSES
    max_rounds: int = 6
    dry_run: bool = False
    no_cache: bool = False  # fresh calls (answers still stored)
    usable_fraction: float = 0.5
    chunk_chars: int | None = None  # override the material size of one call
    module_max_files: int = 12
    # A weak model (None: the embedded one) cannot cite nor judge reliably. Then round 1 asks
    # only what each module is for, and in the lens rounds the lines that code's rules select
    # are the findings; the model only phrases their claims (checked to mention the line).
    weak_model: bool | None = None
    redact: bool | None = None  # None: RLM_REDACT, config, or on for non-loopback endpoints
    command: str = "audit"  # for the run record
    resume: str | None = None  # a recorded run to finish: its answered calls come from the cache
    argv: list[str] | None = None  # the command line, for the run record (secrets redacted)


def parse_lenses(spec: str | None) -> tuple[str, ...]:
    if not spec or not spec.strip():
        return LENSES
    out: list[str] = []
    for part in spec.split(","):
        p = part.strip().lower()
        if not p:
            continue
        if p not in LENSES:
            raise UsageError(f"unknown lens {p!r}: choose from {', '.join(LENSES)}")
        if p not in out:
            out.append(p)
    if not out:
        raise UsageError("--lens is empty: choose from " + ", ".join(LENSES))
    return tuple(out)
