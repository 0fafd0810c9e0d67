"""rlm: answer questions about corpora far larger than a model's context window, with code first
and honest coverage.

    import rlm

    report = rlm.ask("big.log", "anomalies?")  # no model configured: code finds and words it
    print(report.answer)
    print(report.coverage.statement)  # what was read, only scanned, failed or skipped

The calls return data (pydantic reports; rlm.render draws them as Markdown). The names below are
imported on first use, so that ``import rlm`` and ``rlm --version`` stay light.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name -> the module that defines it
_EXPORTS = {
    "ask": "rlm.api", "ask_async": "rlm.api", "AskOptions": "rlm.api",
    "audit": "rlm.api", "mine": "rlm.api", "get_model": "rlm.api",
    "audit_async": "rlm.repo.audit.run", "AuditOptions": "rlm.repo.audit.options",
    "mine_async": "rlm.repo.mine.run", "MineOptions": "rlm.repo.mine.options",
    "RunOptions": "rlm.engine.options", "Model": "rlm.models.base",
    "Report": "rlm.schemas.report", "AuditReport": "rlm.schemas.repo_report",
    "MineReport": "rlm.schemas.repo_report",
    **{name: "rlm.errors" for name in (
        "RlmError", "UsageError", "ModelUnreachable", "ModelCallError", "ContextTooLong",
        "BudgetExhausted", "PathRefused", "RunsUnreadable", "EvidenceError", "ScanInterrupted")},
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'rlm' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # once: later lookups do not come here
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:  # what type checkers and IDEs see; at run time __getattr__ imports on use
    from rlm.api import AskOptions, ask, ask_async, audit, get_model, mine
    from rlm.engine.options import RunOptions
    from rlm.errors import (BudgetExhausted, ContextTooLong, EvidenceError, ModelCallError,
                            ModelUnreachable, PathRefused, RlmError, RunsUnreadable,
                            ScanInterrupted, UsageError)
    from rlm.models.base import Model
    from rlm.repo.audit.options import AuditOptions
    from rlm.repo.audit.run import audit_async
    from rlm.repo.mine.options import MineOptions
    from rlm.repo.mine.run import mine_async
    from rlm.schemas.repo_report import AuditReport, MineReport
    from rlm.schemas.report import Report
