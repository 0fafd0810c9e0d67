"""Options of `rlm audit`: the shared run options (rlm.engine.options; each flag means the same on
every command) plus the audit's own."""

from __future__ import annotations

from dataclasses import dataclass

from rlm.repo.audit.lenses import LENSES
from rlm.errors import UsageError
from rlm.engine.options import RunOptions


@dataclass
class AuditOptions(RunOptions):
    """Options of :func:`rlm.repo.audit`: the shared run options, the lenses, the rounds and the
    material of one call."""

    command: str = "audit"
    usable_fraction: float = 0.5  # of the model context, for one job's material
    lenses: tuple[str, ...] = LENSES
    max_rounds: int = 6
    chunk_chars: int | None = None  # override the material size of one call
    module_max_files: int = 12
    # A weak model (None: the embedded one) cannot cite nor judge reliably. Then round 1 asks
    # only what each module is for, and in the lens rounds the lines that code's rules select
    # are the findings; the model only phrases their claims (checked to mention the line).
    summary: bool = False  # --summary: a paragraph from the verified findings (rlm.repo.summary)
    weak_model: bool | None = None


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
