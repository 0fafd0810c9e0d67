"""The shapes of sub-call outputs: untrusted (a model wrote them), validated by pydantic.

They are deliberately *bounded* (maxItems, maxLength well under ~1000, where llama.cpp grammars
break): a weak local model under a grammar otherwise loops until max_tokens. Recipes
(recipes/*.toml) name them by class name. The report's own shapes are in rlm.schemas.report.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

Severity = Literal["high", "medium", "low"]
ShortName = Annotated[str, Field(max_length=60)]

# ---------------------------------------------------------------- the ask pipeline's calls

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


# ---------------------------------------------------------------- the repository recipes' calls


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
