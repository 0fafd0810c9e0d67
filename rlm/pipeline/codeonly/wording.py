"""What a model may add to code-found candidates, and what it may never change.

On profile groups and grep hits the model's label, summary or answer is optional wording: code
has already found, counted and quoted the lines. So a failed or invalid wording call is one
declared line (code's wording is shown, coverage stays complete), and a model label never
downgrades a signal code saw: an error-level or panic group is never presented as "noise".
"""

from __future__ import annotations

import re

_SEVERE = re.compile(r"\b(ERROR|ERR|FATAL|CRIT(?:ICAL)?|EMERG|ALERT|SEVERE|PANIC)\b|"
                     r"\bpanic(?:ked)?\b|\bsegfault\b|\bsegmentation fault\b|\btraceback\b|"
                     r"\bexception\b|\bOOM\b|out of memory|\bkilled\b", re.I)
DOWNGRADES = {"noise"}


def code_severity(texts: list[str], why: str = "") -> str | None:
    """'error' when code sees an error level or a crash word in the lines, else None."""
    if "error level" in why:
        return "error"
    return "error" if any(_SEVERE.search(t[:400]) for t in texts) else None


def guard_label(label: str | None, texts: list[str], why: str = "") -> tuple[str | None, str | None]:
    """(label to show, note) — a model label that would downgrade a code signal is replaced by
    code's own label, and the replacement is said."""
    sev = code_severity(texts, why)
    if label in DOWNGRADES and sev:
        return sev, f"the model labelled it {label!r}; code saw {sev}-level lines, so it stays {sev}"
    return label, None


def wording_failed_note(failed: int, total: int, reason: str, what: str = "group") -> str:
    """One declared line when the model's optional wording failed (coverage stays complete)."""
    unit = what if total == 1 else what + "s"
    return (f"the model's wording failed for {failed} of {total} {unit} ({reason[:120]}); "
            f"code's wording is shown and every candidate line was read by code")
