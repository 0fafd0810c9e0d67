"""The report's shapes: our own, trusted, and public (the JSON contract in DESIGN.md).
The shapes of what a model returns (untrusted, bounded, validated) are in rlm.schemas.calls."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

REPORT_VERSION = "1"

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
    # a piece of one over-long line (cut by bytes): where in the file, since its lines say "1-1"
    byte_start: int | None = None
    byte_end: int | None = None


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
    # where each thing happened: runs of states per file (rlm.engine.covmap); absent in old runs
    map: dict | None = None

    def skipped_incomplete(self) -> bool:
        """Skipped files that hold text we should have read (not binaries we refuse by design)."""
        return any(x.get("incomplete") for x in self.skipped)


class EvidenceCounts(BaseModel):
    """How the citations of a run fared in rlm.verify.evidence: the same counts in every report."""

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
    """What was replaced by placeholders before prompts left this machine (rlm.redact.detect)."""

    enabled: bool = False
    why: str = ""
    report_masked: bool = False  # --redact-report: this report and the run record are masked
    values: int = 0  # distinct values replaced
    prompts: int = 0  # distinct prompts that had at least one value replaced
    kinds: dict[str, int] = Field(default_factory=dict)  # SECRET, EMAIL, CARD, IBAN, PHONE, IP


class Report(BaseModel):
    """The JSON report of a run (`--json`; the contract in DESIGN.md): the answer, findings with
    checked evidence, coverage, the gate's reasons, usage and the run id."""

    version: str = REPORT_VERSION
    command: str
    question: str
    corpus: CorpusInfo
    # count / aggregate: a counting question (rlm.pipeline.gate.counting); none: stopped before the gate
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
    read_as: str = ""  # how code read the question (rlm.pipeline.query): "Read as: count lines ..."
    # a counting answer: what it holds, with every matching line number (rlm.pipeline.codeonly.count_text)
    matched: dict | None = None
    # where the work ran: name (local|ray), workers, nodes, shards_per_node, started_local,
    # tasks (what ran off the driver, by kind) (rlm.executor)
    executor: dict | None = None
    # "anomalies?" (profile): the ranked event kinds, rlm.corpus.anomalies.KindRow.as_dict()
    event_kinds: list[dict] = Field(default_factory=list)
    # where every line of each event kind falls (bins over lines and time, or the lines):
    # rlm.corpus.lanes.kind_lanes; absent in runs recorded before it (their lanes: examples)
    timeline: dict | None = None
