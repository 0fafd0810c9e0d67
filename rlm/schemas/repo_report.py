"""The report shapes of the repository recipes (audit, mine): our own, trusted. They extend the
common :class:`rlm.schemas.report.Report` contract with what audit and mine add (modules, rounds,
facts per question, file coverage)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from rlm.codeview.shapes import CodeViews

from rlm.schemas.calls import Severity
from rlm.schemas.report import EvidenceCounts, Finding, ReduceInfo, Report

# ---------------------------------------------------------------- report parts (trusted)


class FileCoverage(BaseModel):
    """Every file the walker listed, in exactly one bucket: read by the model, only scanned by
    code, failed (its calls failed or were not run), or skipped (with the reason)."""

    total: int = 0  # the walker's listed files (kept + skipped)
    read_by_model: int = 0
    scanned_by_code: int = 0
    failed: int = 0
    skipped: int = 0
    skipped_by_reason: dict[str, int] = Field(default_factory=dict)
    ignored_by_gitignore: int = 0  # not listed at all, so not in total
    adds_up: bool = True
    method: str = ""  # how the walker listed files: git | filesystem
    failed_files: list[str] = Field(default_factory=list)
    read_files: list[str] = Field(default_factory=list)  # the HTML report's file bar
    scanned_only: list[str] = Field(default_factory=list)
    skipped_files: list[dict] = Field(default_factory=list)  # {path, reason, files}
    # bytes of each listed path the walker measured (every kept file; skipped files it looked
    # at; not skipped folders): the HTML bar's widths. Absent in runs recorded before it.
    sizes: dict[str, int] = Field(default_factory=dict)


class AuditFinding(Finding):
    kind: Literal["fact", "risk", "doc"] = "fact"  # doc: a claim quoted from documentation
    module: str = ""
    severity: Severity | None = None
    lens: str = "structure"
    round: int = 1
    evidence_path: str = ""
    quote: str = ""
    status: Literal["verified", "corrected", "rejected"] = "verified"


class ModuleInfo(BaseModel):
    name: str
    files: int
    lines: int
    bytes: int
    purpose: str = ""
    key_apis: list[str] = Field(default_factory=list)  # only names code found in the module
    tested_by: list[str] = Field(default_factory=list)  # test files importing it (code)
    chunks: int = 0
    findings: int = 0


class RoundInfo(BaseModel):
    round: int
    work: list[str] = Field(default_factory=list)
    calls: int = 0
    failed: int = 0
    not_run: int = 0  # jobs the budget or Ctrl-C left unstarted
    new: int = 0


class LinkCounts(BaseModel):
    """Test -> definition links written by code (rlm.repo.links): verified (code resolved the
    call through imports and types), inferred (named like package definitions, not resolved; each
    keeps its reason), rejected (named like one, but code showed a builtin, a name from outside
    the repository or the test's own helper runs)."""

    verified: int = 0
    inferred: int = 0
    rejected: int = 0


class AuditInfo(BaseModel):
    lenses: list[str]
    modules: list[ModuleInfo] = Field(default_factory=list)
    rounds: list[RoundInfo] = Field(default_factory=list)
    stopped: Literal["no_progress", "nothing_left", "budget", "max_rounds", "dry_run",
                     "no_model"] = "no_progress"
    stop_reason: str = ""
    evidence: EvidenceCounts = Field(default_factory=EvidenceCounts)
    links: LinkCounts = Field(default_factory=LinkCounts)


class AuditReport(Report):
    """The report of `rlm audit`: the common report plus modules, rounds and file coverage."""

    # fanout: module calls over chunks (and digging rounds); code_only: no model, code's facts
    strategy: Literal["fanout", "code_only"] = "fanout"  # type: ignore[assignment]
    findings: list[AuditFinding] = Field(default_factory=list)  # type: ignore[assignment]
    reduce: ReduceInfo | None = None  # type: ignore[assignment]  # only with --summary
    audit: AuditInfo
    # --summary: a paragraph the model wrote from the verified findings only (rlm.repo.summary)
    summary: str | None = None
    summary_cites: list[str] = Field(default_factory=list)  # evidence paths it rests on
    files: FileCoverage = Field(default_factory=FileCoverage)
    # code's whole-repository views: analyzers (ruff, radon, vulture), module graph, entry
    # points, public API, dependencies, test map, hotspots (rlm.codeview); None in a dry run
    views: CodeViews | None = None


class Fact(BaseModel):
    claim: str
    evidence_path: str
    quote: str  # taken from the file by code
    confidence: Literal["verified", "inferred"]
    basis: Literal["code", "docs", "names"] = "code"
    note: str = ""
    # code's canonical answer (rlm.mine.codefacts): the file a behaviour lives in (rows are
    # grouped by it), the resolved definition ("path:line") and the test that pins it
    module: str = ""
    definition: str = ""
    test: str = ""


class QuestionResult(BaseModel):
    question: str
    keywords: list[str] = Field(default_factory=list)
    relevant_files: list[str] = Field(default_factory=list)
    # no model: the definitions in the best-ranked files that the question's words name
    definitions: list[str] = Field(default_factory=list)
    candidate_lines: int = 0
    calls: int = 0
    fanout: bool = False
    strategy: Literal["one_call", "fanout", "code_only"] = "code_only"  # code_only: nothing to read
    scope: str = ""  # what code did and why (no fan-out needed, ...)
    verified: list[Fact] = Field(default_factory=list)
    inferred: list[Fact] = Field(default_factory=list)
    rejected: list[dict] = Field(default_factory=list)
    failed: list[str] = Field(default_factory=list)
    placeholder: str | None = None
    summary: str | None = None  # --summary: from the verified facts only (rlm.repo.summary)
    summary_cites: list[str] = Field(default_factory=list)


class MineReport(Report):
    """The report of `rlm mine`: the common report plus facts per question and file coverage."""

    # code scoped every question (keyword search, one hop over shared identifiers); then one call
    # or a fan-out per question (QuestionResult.strategy)
    strategy: Literal["scoped"] = "scoped"  # type: ignore[assignment]
    reduce: ReduceInfo | None = None  # type: ignore[assignment]  # mine runs no reduce
    questions: list[QuestionResult] = Field(default_factory=list)
    files: FileCoverage = Field(default_factory=FileCoverage)
    links: LinkCounts = Field(default_factory=LinkCounts)
