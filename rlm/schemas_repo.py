"""Pydantic shapes of the repository recipes (audit, mine).

Sub-call outputs are untrusted and *bounded* (maxItems, maxLength well under ~1000, where
llama.cpp grammars break). Report shapes extend the common :class:`rlm.schemas.Report`
contract with what audit and mine add (modules, rounds, facts per question, file coverage).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from rlm.codeview.shapes import CodeViews
from rlm.schemas import EvidenceCounts, Finding, ReduceInfo, Report  # noqa: F401 - re-exported

Severity = Literal["high", "medium", "low"]
ShortName = Annotated[str, Field(max_length=60)]

# ---------------------------------------------------------------- sub-call outputs (untrusted)


class CitedFact(BaseModel):
    model_config = ConfigDict(extra="forbid")
    claim: str = Field(max_length=160, description="one sentence, at most 25 words")
    evidence_path: str = Field(max_length=120,
                               description="path:start-end, with the line numbers printed in the excerpt")
    quote: str = Field(max_length=120, description="a few words copied exactly from those lines")


class CitedRisk(CitedFact):
    severity: Severity = "medium"


class ModuleResult(BaseModel):
    """Round 1 of an audit: one module (or part of one)."""

    model_config = ConfigDict(extra="forbid")
    purpose: str = Field(max_length=240, description="what this code is for, one or two sentences")
    key_apis: list[ShortName] = Field(default_factory=list, max_length=6,
                                      description="names of the main classes/functions defined here")
    facts: list[CitedFact] = Field(default_factory=list, max_length=3)
    risks: list[CitedRisk] = Field(default_factory=list, max_length=3)


class ModuleBrief(BaseModel):
    """Round 1 for a weak model (the embedded one): only what the module is for. Its facts and
    risks come from the lens rounds, where code selects the candidate lines."""

    model_config = ConfigDict(extra="forbid")
    purpose: str = Field(max_length=160, description="what this code is for, one sentence")
    key_apis: list[Annotated[str, Field(max_length=40)]] = Field(default_factory=list, max_length=4)


class Pick(BaseModel):
    """One picked candidate line. No quote: code takes it from the file (a weak model's
    copied text is the likeliest thing to be wrong)."""

    model_config = ConfigDict(extra="forbid")
    n: int = Field(description="the number in brackets before the line")
    claim: str = Field(max_length=120, description="at most 20 words")


class PickResult(BaseModel):
    """Code shows numbered candidate lines; the model picks a few and says what they show."""

    model_config = ConfigDict(extra="forbid")
    picks: list[Pick] = Field(default_factory=list, max_length=3)


class Phrase(BaseModel):
    model_config = ConfigDict(extra="forbid")
    n: int = Field(description="the number in brackets before the line")
    claim: str = Field(max_length=100, description="at most 15 words about that line")


class PhraseResult(BaseModel):
    """Weak models: one short claim per numbered line that code selected."""

    model_config = ConfigDict(extra="forbid")
    claims: list[Phrase] = Field(default_factory=list, max_length=6)


class RiskPick(Pick):
    severity: Severity = "medium"


class RiskPickResult(BaseModel):
    model_config = ConfigDict(extra="forbid")
    picks: list[RiskPick] = Field(default_factory=list, max_length=3)


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


class AuditInfo(BaseModel):
    lenses: list[str]
    modules: list[ModuleInfo] = Field(default_factory=list)
    rounds: list[RoundInfo] = Field(default_factory=list)
    stopped: Literal["no_progress", "nothing_left", "budget", "max_rounds", "dry_run",
                     "no_model"] = "no_progress"
    stop_reason: str = ""
    evidence: EvidenceCounts = Field(default_factory=EvidenceCounts)


class AuditReport(Report):
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


class QuestionResult(BaseModel):
    question: str
    keywords: list[str] = Field(default_factory=list)
    relevant_files: list[str] = Field(default_factory=list)
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
    # code scoped every question (keyword search, one hop over shared identifiers); then one call
    # or a fan-out per question (QuestionResult.strategy)
    strategy: Literal["scoped"] = "scoped"  # type: ignore[assignment]
    reduce: ReduceInfo | None = None  # type: ignore[assignment]  # mine runs no reduce
    questions: list[QuestionResult] = Field(default_factory=list)
    files: FileCoverage = Field(default_factory=FileCoverage)
