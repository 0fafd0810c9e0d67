"""One cap on temporary disk for the whole run: stdin, pipes and every `.gz` spooled together,
and the placeholders redaction no longer keeps in memory (rlm.redact.spill).

Each spooled stream used to have its own 4 GiB allowance, so two decompression bombs in one folder
wrote 6.1 GB at once. Now the spools of a run share one budget (``RLM_SPOOL_LIMIT``, bytes, with
an optional K/M/G suffix; 4 GiB by default), and hitting it is a one-line error that names the
cap and how to raise it.
"""

from __future__ import annotations

import os
import threading

from rlm.errors import UsageError

DEFAULT_LIMIT = 4 * 1024**3
_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}


def parse_size(text: str) -> int:
    """'4G', '512M', '1000' -> bytes; a UsageError naming the setting when unreadable."""
    t = text.strip().upper().removesuffix("B").removesuffix("I")
    unit = t[-1:] if t[-1:] in _UNITS else ""
    try:
        value = float(t[: len(t) - len(unit)] if unit else t)
    except ValueError:
        raise UsageError(f"RLM_SPOOL_LIMIT={text!r}: expected a size such as 4G or 512M") from None
    if value < 0:
        raise UsageError(f"RLM_SPOOL_LIMIT={text!r}: a size cannot be negative")
    return int(value * _UNITS[unit])


def _human(n: int) -> str:
    for unit, size in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} bytes"


class SpoolBudget:
    """Bytes on temporary disk held by the run's live spools (released when a source closes)."""

    def __init__(self) -> None:
        self._held = 0
        self._lock = threading.Lock()

    @property
    def limit(self) -> int:
        raw = os.environ.get("RLM_SPOOL_LIMIT")
        return parse_size(raw) if raw else DEFAULT_LIMIT

    @property
    def held(self) -> int:
        return self._held

    def take(self, n: int, display: str) -> None:
        limit = self.limit
        with self._lock:
            if self._held + n > limit:
                raise UsageError(
                    f"{display}: the spool cap of {_human(limit)} for this run was reached "
                    f"(stdin, pipes and .gz files are copied to temporary disk to be indexed, "
                    f"and redaction's placeholders past what memory holds are kept there; set "
                    f"RLM_SPOOL_LIMIT to allow more)")
            self._held += n

    def give_back(self, n: int) -> None:
        with self._lock:
            self._held = max(0, self._held - n)


spool_budget = SpoolBudget()
