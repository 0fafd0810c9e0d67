"""One calibration trial: a prompt filled to a share of the context with its fact(s) planted,
and the code that scores the model's answer.

The prompt has the same clean layout as every sub-call of rlm: instructions first, then the
question, then only the material (from material.toml, never from the test fixtures).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from rlm.calibrate.material import facts, filler_line
from rlm.models.base import Model

ANSWER_MAX_TOKENS = 120
_HEADROOM = 96  # tokens kept free besides the answer (chat template, rounding)

SYSTEM = ("You answer a question about a meeting transcript. Use only the transcript. "
          "Reply with JSON only: answer (at most 40 words, keep numbers and names exactly).")


class CalibAnswer(BaseModel):
    """A short free answer; scoring is done by code on its text."""

    model_config = ConfigDict(extra="forbid")
    answer: str = Field(max_length=300)


@dataclass
class Trial:
    task: str  # needle | synthesis
    level: float  # target fill, share of the context
    rep: int
    target_tokens: int
    question: str = ""
    facts: list[str] = field(default_factory=list)  # the planted lines
    expected: list[str] = field(default_factory=list)  # strings the answer must hold
    messages: list[dict] = field(default_factory=list)
    prompt_tokens: int = 0
    answer: str = ""
    correct: bool = False
    error: str | None = None


def _depths(task: str, rep: int, reps: int) -> list[float]:
    t = 0.5 if reps <= 1 else rep / (reps - 1)
    if task == "needle":
        return [0.1 + 0.8 * t]
    j = 0.08 * (t - 0.5)
    return [1 / 6 + j, 0.5 + j, 5 / 6 + j]


def build_trial(model: Model, task: str, level: float, rep: int, reps: int,
                target_tokens: int, seed: int = 7) -> Trial:
    """A prompt of about target_tokens with the task's fact(s) planted at their depths."""
    rng = random.Random(f"calibrate-{seed}-{task}-{level:.3f}-{rep}")
    q, planted, expected = facts(task, rng)
    head = [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"Question: {q}\nTranscript:\n"}]
    budget = target_tokens - sum(model.count_tokens(m["content"]) for m in head) - 8
    lines: list[str] = []
    used = sum(model.count_tokens(f) + 1 for f in planted)
    while True:
        ln = filler_line(rng)
        c = model.count_tokens(ln) + 1
        if used + c > budget and len(lines) > len(planted):
            break
        lines.append(ln)
        used += c
    for d, fact in zip(_depths(task, rep, reps), planted):
        lines.insert(min(len(lines), max(0, int(d * len(lines)))), fact)
    text = "\n".join(lines)
    # tokens of the joined text may differ a little from the sum: trim filler from the end
    used = model.count_tokens(text)
    while used > budget and len(lines) > len(planted) + 1:
        k = next(i for i in range(len(lines) - 1, -1, -1) if lines[i] not in planted)
        del lines[k]
        text = "\n".join(lines)
        used = model.count_tokens(text)
    msgs = [head[0], {"role": "user", "content": head[1]["content"] + text}]
    tr = Trial(task=task, level=level, rep=rep, target_tokens=target_tokens, question=q,
               facts=planted, expected=expected, messages=msgs)
    tr.prompt_tokens = sum(model.count_tokens(m["content"]) for m in msgs)
    return tr


def score_answer(answer: str, expected: list[str]) -> bool:
    """Every expected string in the answer (case-insensitive; numbers as whole numbers)."""
    a = " ".join(answer.lower().split())
    for e in expected:
        e = e.lower()
        if e.isdigit():
            if not re.search(rf"(?<![\d,]){e}(?![\d,])", a.replace(",", "")):
                return False
        elif e not in a:
            return False
    return True


def levels_tokens(context_tokens: int, levels: list[float]) -> list[tuple[float, int]]:
    """Fill levels as (share, prompt tokens), capped so the answer still fits the context."""
    cap = context_tokens - ANSWER_MAX_TOKENS - _HEADROOM
    out = []
    for lv in sorted(set(levels)):
        if not 0 < lv <= 1:
            raise ValueError(f"fill level {lv} is not in (0, 1]")
        out.append((lv, max(64, min(cap, int(lv * context_tokens)))))
    return out
