"""What an audit knows while it runs: modules, findings, what was read, what failed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rlm.repo.audit.findings import Findings
from rlm.repo.audit.jobs import FailedPart
from rlm.repo.audit.options import AuditOptions
from rlm.corpus.modules import Module, group_modules
from rlm.repo.corpus import RepoCorpus
from rlm.repo.model_reads import ReadTracker
from rlm.schemas.report import FailedChunk

if TYPE_CHECKING:
    from rlm.codeview.shapes import CodeViews
    from rlm.codeview.sources import Sources


@dataclass
class AuditState:
    corpus: RepoCorpus
    opts: AuditOptions
    max_chars: int
    brief: bool  # weak-model mode
    modules: list[Module] = field(default_factory=list)
    findings: Findings = None  # type: ignore[assignment]
    read: ReadTracker = field(default_factory=ReadTracker)
    map_paths: set[str] = field(default_factory=set)  # files the module map covers
    failed_map: dict[str, FailedPart] = field(default_factory=dict)  # parts not read
    other_failed: list[FailedChunk] = field(default_factory=list)  # digs that failed
    retried: set[str] = field(default_factory=set)
    lenses_run: set[str] = field(default_factory=set)
    dug: set[str] = field(default_factory=set)
    purpose: dict[str, list[str]] = field(default_factory=dict)
    apis: dict[str, list[str]] = field(default_factory=dict)
    chunks_of: dict[str, int] = field(default_factory=dict)
    chunks_total: int = 0
    chunks_ok: int = 0
    declared: list[str] = field(default_factory=list)
    dropped_purposes: int = 0
    views: CodeViews | None = None  # the whole-repository views (rlm.codeview), round 0
    sources: Sources | None = None  # their parsed Python files
    links: dict[str, int] = field(default_factory=dict)  # test links by status (rlm.repo.links)
    _job_n: int = 0

    def __post_init__(self) -> None:
        self.modules = group_modules(self.corpus.files, max_files=self.opts.module_max_files)
        if self.findings is None:
            self.findings = Findings(self.corpus, weak=self.brief)

    def job_id(self, prefix: str) -> str:
        self._job_n += 1
        return f"{prefix}{self._job_n:04d}"

    def failed_entries(self) -> list[FailedChunk]:
        """``coverage.chunks_failed``: unread map parts first, then failed digs."""
        return [e for fp in self.failed_map.values() for e in fp.entries] + self.other_failed
