"""The one place that sizes a call's window, for every command.

A call carries a constant part (instructions, schema, question: ``PROMPT_OVERHEAD_TOKENS``) and
material. The material may fill ``usable_fraction`` of the smallest context among the models
the run uses, unless `rlm calibrate` measured a usable window for one of them, which then wins
(and the gate's reasons say so). Chunkers turn tokens into bytes or characters with a measured
chars-per-token ratio (the model's own tokenizer on the corpus samples) or, for code, a
conservative fixed one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from rlm.corpus.lines import number_pairs
from rlm.models.base import Model

PROMPT_OVERHEAD_TOKENS = 500  # instructions + schema + question + headers, per call (measured)
CODE_CHARS_PER_TOKEN = 3.0  # code, conservative (SmolLM2 measured ~3.2 on Python)
MIN_WINDOW_TOKENS = 512


@dataclass
class Window:
    tokens: int  # material tokens one call may carry
    note: str | None = None  # the calibration that set it, for the gate's reasons

    def chars(self, chars_per_token: float = CODE_CHARS_PER_TOKEN) -> int:
        return int(self.tokens * chars_per_token)


def size_window(models: Sequence[Model], usable_fraction: float) -> Window:
    """The window of one call for a run using ``models`` (main and sub-model)."""
    models = list(dict.fromkeys(models))  # the same model twice counts once
    ctx = min((m.context_tokens or 8192) for m in models)
    tokens = int(ctx * usable_fraction) - PROMPT_OVERHEAD_TOKENS
    from rlm.calibrate import profile_window  # `rlm calibrate` profiles, when they exist

    cals = [c for c in (profile_window(getattr(m, "name", ""), m.context_tokens or 8192)
                        for m in models) if c]
    note = "; ".join(c[1] for c in cals) or None
    wins = [c[0] for c in cals if c[0]]
    if wins:
        tokens = min(min(wins), int(ctx * 0.97)) - PROMPT_OVERHEAD_TOKENS
    return Window(max(MIN_WINDOW_TOKENS, tokens), note)


CHUNK_FILL = 0.9  # of the window: room for a chunk a little denser than the samples


def chars_per_token(model: Model, samples: Sequence[str], lines: int = 1) -> float:
    """Bytes per token (chunks are cut by bytes), measured on the sample lines as they are
    sent (numbered, with numbers of the file's magnitude) with the model's own tokenizer where
    it is local, else the byte-level estimate of rlm.engine.fit (non-ASCII counted). Each chunk
    is measured again on its own text before it is sent."""
    from rlm.engine import fit

    text = "\n".join(samples)[:20_000]
    if not text.strip():
        return 3.0
    width = len(str(max(1, lines)))
    sent = number_pairs(((int("9" * width), s) for s in text.split("\n")), max_chars=None)[0]
    n = max(1, fit.estimate(model, sent))
    return max(1.0, len(text.encode("utf-8", "replace")) / n)


def chunk_bytes(window_tokens: int, bytes_per_token: float) -> int:
    """Chunk size in bytes: the window at the measured ratio, less a margin (CHUNK_FILL)."""
    return max(256, int(window_tokens * bytes_per_token * CHUNK_FILL))


def est_tokens(chars: int, chars_per_token: float = CODE_CHARS_PER_TOKEN) -> int:
    return int(chars / chars_per_token) + 1


def window_chars(model: Model | None, usable_fraction: float, override: int | None = None,
                 lo: int = 1500, hi: int = 24_000) -> int:
    """Characters of code one repository call may carry (audit, mine), clamped to [lo, hi]."""
    if override:
        return max(200, int(override))
    if model is None:
        return max(lo, min(hi, int((8192 * usable_fraction - PROMPT_OVERHEAD_TOKENS)
                                   * CODE_CHARS_PER_TOKEN)))
    return max(lo, min(hi, size_window([model], usable_fraction).chars()))


QUESTION_SHARE = 0.5  # of a call's window: the rest must stay for the material it reads


def check_question(models: Sequence[Model], question: str | None, usable_fraction: float) -> None:
    """Refuse, before any call, a question too long for the model's window: it goes into every
    call, so each would fail (a 131k-character question made 123 calls, all HTTP 400)."""
    from rlm.engine import fit
    from rlm.errors import UsageError
    from rlm.models.profile import profile_of

    reading = [m for m in dict.fromkeys(models) if m is not None and profile_of(m).tier != "none"]
    if not question or not reading:
        return  # code only: no call carries the question
    win = size_window(reading, usable_fraction)
    limit = int(win.tokens * QUESTION_SHARE)
    need = max(fit.estimate(m, question) for m in reading)
    if need > limit:
        ctx = min((m.context_tokens or 8192) for m in reading)
        raise UsageError(
            f"the question is ~{need:,} tokens ({len(question):,} characters), but a call to "
            f"the model ({ctx:,}-token context, {win.tokens:,} usable) can give it at most "
            f"{limit:,} and keep room for the text it reads: shorten the question")
