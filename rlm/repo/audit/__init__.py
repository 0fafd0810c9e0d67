"""`rlm audit REPO`: a repository audit in rounds, every claim checked against the files.

Modules: ``options`` (AuditOptions, --lens), ``lenses`` (code's candidate rules, data in
recipes/audit-lenses.toml), ``jobs`` (one type per job kind, each handling its answer and its
failure), ``findings`` (the seen-set and the evidence checks), ``state``, ``planner`` (the work
of each round, chosen by code), ``run`` (rounds on rlm.repo.rounds, run record, entry points),
``report`` (the Markdown is drawn by rlm.render.audit).
"""

from rlm.repo.audit.lenses import LENSES
from rlm.render.audit import audit_markdown  # drawn by rlm.render, re-exported here
from rlm.repo.audit.options import AuditOptions, parse_lenses
from rlm.repo.audit.run import audit, audit_async

__all__ = ["LENSES", "AuditOptions", "audit", "audit_async", "audit_markdown", "parse_lenses"]
