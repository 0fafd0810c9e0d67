"""Pydantic models: the shapes of sub-call outputs (untrusted, validated) and of the report.

Sub-call schemas are deliberately *bounded* (maxItems, maxLength): a weak local model under a
grammar otherwise loops until max_tokens. Report shapes follow the contract in DESIGN.md.
"""

from __future__ import annotations

from typing import Literal

import re

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from typing_extensions import Annotated

REPORT_VERSION = "1"

# ---------------------------------------------------------------- sub-call outputs (untrusted)

_REPEAT = re.compile(r"(.{2,}?)\1{3,}")
_NUMBER = re.compile(r"[\d\s.,:/%+-]{1,40}")  # 22, 22/tcp-less digits, 1,234, 3.5%, 10:30
_CONTENT = re.compile(r"\w")


def _not_degenerate(text: str) -> str:
    """Weak models loop ("nice_nice_nice_...") or answer with nothing but symbols: reject both so
    the call is retried with the reason. A short number (`22`, `1,000,000`) is a real answer."""
    t = text.strip()
    if not _CONTENT.search(t):
        raise ValueError("text is empty or only symbols")
    if _NUMBER.fullmatch(t) and sum(ch.isdigit() for ch in t) <= 20:
        return t
    # runs of blanks or of rule characters ("=====", aligned columns) are not a loop
    if any(_CONTENT.search(m.group(1)) for m in _REPEAT.finditer(" ".join(t.split()))):
        raise ValueError("text is degenerate (a fragment repeated over and over)")
    return t


Prose = Annotated[str, AfterValidator(_not_degenerate)]

Label = Literal["error", "security", "config", "session", "performance", "other", "noise"]


class CandidateJudgement(BaseModel):
    """The model's judgement of one numbered candidate line (profile/grep paths)."""

    model_config = ConfigDict(extra="forbid")
    line: int = Field(description="the line number shown before the candidate")
    claim: Prose = Field(max_length=120, description="at most 25 words: what this line shows")
    label: Label


class GroupJudgement(BaseModel):
    """One call per group of related candidate lines: a label from an enum and a short summary.
    A degenerate summary is dropped by code (the label still counts), not retried forever."""

    model_config = ConfigDict(extra="forbid")
    label: Label
    summary: str = Field(default="", max_length=100, description="at most 15 words")


class MapFinding(BaseModel):
    model_config = ConfigDict(extra="forbid")
    line: int = Field(description="line number as printed at the start of the line")
    claim: Prose = Field(max_length=160)
    quote: str = Field(default="", max_length=160, description="short exact text from that line")


class MapResult(BaseModel):
    """Fan-out map call: up to 3 findings about the narrow question, citing numbered lines."""

    model_config = ConfigDict(extra="forbid")
    findings: list[MapFinding] = Field(default_factory=list, max_length=3)


class MergeGroup(BaseModel):
    model_config = ConfigDict(extra="forbid")
    ids: list[int] = Field(min_length=1, max_length=8)
    claim: Prose = Field(max_length=240)


class MergeResult(BaseModel):
    """Reduce call: group findings that say the same thing, with one merged claim per group."""

    model_config = ConfigDict(extra="forbid")
    groups: list[MergeGroup] = Field(default_factory=list, max_length=16)


class AnswerResult(BaseModel):
    """Direct read / synthesis: a short answer plus the finding or line ids it rests on."""

    model_config = ConfigDict(extra="forbid")
    answer: Prose = Field(max_length=800)  # llama.cpp grammars fail above ~1000
    cites: list[int] = Field(default_factory=list, max_length=12)


# ---------------------------------------------------------------- report (our own, trusted)


class Source(BaseModel):
    path: str
    line_start: int
    line_end: int


class Finding(BaseModel):
    id: str
    claim: str
    evidence: str  # text taken from the file by code, never from the model
    source: Source
    verified: bool
    chunk: str | None = None
    label: str | None = None
    group: str | None = None  # findings sharing an identifier (e.g. one session id)
    note: str | None = None  # why unverified, or how the range was corrected
    rules: list[str] | None = None  # which code rules picked the line (profile candidates)


class CorpusInfo(BaseModel):
    path: str
    bytes: int
    lines: int
    files: int
    kind: str


class Estimate(BaseModel):
    calls: int
    prompt_tokens: int
    seconds: float | None = None
    basis: str | None = None  # where the speed behind `seconds` comes from (rlm.models.speed)


class GateInfo(BaseModel):
    reasons: list[str]
    estimate: Estimate


class FailedChunk(BaseModel):
    chunk: str
    path: str
    line_start: int
    line_end: int
    reason: str  # for people; code reads `status`
    status: Literal["failed", "not_run", "interrupted"] = "failed"


class Coverage(BaseModel):
    chunks_total: int = 0
    chunks_ok: int = 0
    chunks_failed: list[FailedChunk] = Field(default_factory=list)
    bytes_total: int = 0
    bytes_scanned_by_code: int = 0
    bytes_read_by_model: int = 0
    lines_total: int = 0
    lines_scanned_by_code: int = 0
    lines_read_by_model: int = 0
    skipped: list[dict] = Field(default_factory=list)  # files skipped (binary, unreadable, ...)
    declared: list[str] = Field(default_factory=list)  # cuts and decodings the user must know
    gaps: list[str] = Field(default_factory=list)  # what was needed and not read (incomplete)
    interrupted: bool = False  # Ctrl-C: what finished is reported
    complete: bool = True
    statement: str = ""
    # where each thing happened: runs of states per file (rlm.run.covmap); absent in old runs
    map: dict | None = None

    def skipped_incomplete(self) -> bool:
        """Skipped files that hold text we should have read (not binaries we refuse by design)."""
        return any(x.get("incomplete") for x in self.skipped)


class EvidenceCounts(BaseModel):
    """How the citations of a run fared in rlm.evidence: the same counts in every report."""

    verified: int = 0
    corrected: int = 0
    rejected: int = 0


class ReduceInfo(BaseModel):
    rounds: int = 0
    stopped: Literal["fits", "no_progress", "budget"] = "fits"
    unmerged: int = 0
    log: list[str] = Field(default_factory=list)


class UsageInfo(BaseModel):
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_calls: int = 0
    wall_s: float = 0.0
    # several --base-url replicas: {url, calls, failures, prompt_tokens, completion_tokens, last_error}
    endpoints: list[dict] = Field(default_factory=list)


class RedactionInfo(BaseModel):
    """What was replaced by placeholders before prompts left this machine (rlm.redact)."""

    enabled: bool = False
    why: str = ""
    report_masked: bool = False  # --redact-report: this report and the run record are masked
    values: int = 0  # distinct values replaced
    prompts: int = 0  # distinct prompts that had at least one value replaced
    kinds: dict[str, int] = Field(default_factory=dict)  # SECRET, EMAIL, CARD, IBAN, PHONE, IP


class Report(BaseModel):
    version: str = REPORT_VERSION
    command: str
    question: str
    corpus: CorpusInfo
    # count / aggregate: a counting question (rlm.strategies.route); none: stopped before the gate
    strategy: Literal["direct", "grep", "profile", "fanout", "count", "aggregate", "none"]
    gate: GateInfo
    answer: str = ""
    findings: list[Finding] = Field(default_factory=list)
    groups: list[dict] = Field(default_factory=list)
    coverage: Coverage = Field(default_factory=Coverage)
    evidence: EvidenceCounts = Field(default_factory=EvidenceCounts)
    reduce: ReduceInfo = Field(default_factory=ReduceInfo)
    usage: UsageInfo = Field(default_factory=UsageInfo)
    model: str = ""
    tier: str = ""  # none | served | local | sampling (rlm.models.profile)
    run_id: str = ""
    dry_run: bool = False
    redaction: RedactionInfo = Field(default_factory=RedactionInfo)
    aggregate: dict | None = None  # counting questions: counts and the items behind each number
    read_as: str = ""  # how code read the question (rlm.query): "Read as: count lines ..."
    # a counting answer: what it holds, with every matching line number (rlm.codeonly.count_text)
    matched: dict | None = None
