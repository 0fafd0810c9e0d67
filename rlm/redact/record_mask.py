"""With redaction on, what the user typed is masked in the run record too.

A question such as "who used AKIAIOSFODNN7EXAMPLE?" goes to the model redacted (rlm.redact.model),
but the run record (question, command, argv, events, the stored report) would keep it on disk.
So when the run redacts, the values the redactor finds in the question and argv are replaced,
wherever they occur in that run's record, by placeholders of the same redactor code
(``⟨SECRET_1⟩``): the record's own numbering, so the report's redaction counts stay about what
left the machine. Corpus text is not touched here (the local report quotes the file unless
--redact-report, which masks the whole record with the run's redactor). API keys are scrubbed
from every record whatever the setting (rlm.store.secrets).
"""

from __future__ import annotations

import orjson

from rlm.redact.detect import PLACEHOLDER, detect
from rlm.redact.redactor import Redactor


def typed_masks(question: str, argv: list[str]) -> list[tuple[str, str]]:
    """(value, placeholder) for each secret or personal value in the question, then the argv;
    the same question always gets the same placeholders (resume compares them). Each value also
    in its JSON-escaped form, for the records stored as JSON; longest first."""
    r = Redactor()
    pairs: dict[str, str] = {}
    for text in [question, *argv]:
        for h in detect(text or ""):
            ph = r.placeholder(h.kind, h.value)
            bare = h.value.rstrip("?.!,;:)")  # `password=hunter2?` ends a question
            for v in {h.value, bare} if len(bare) >= 4 else {h.value}:
                pairs.setdefault(v, ph)
                pairs.setdefault(orjson.dumps(v).decode()[1:-1], ph)
    return sorted(pairs.items(), key=lambda kv: len(kv[0]), reverse=True)


def apply(text: str, masks: list[tuple[str, str]]) -> str:
    for value, ph in masks:
        if value and value in text:
            text = text.replace(value, ph)
    return text


def masked_question(run: dict) -> bool:
    """The recorded question holds placeholders, not what was asked: it cannot be re-asked."""
    q = run.get("question") or ""
    return bool((run.get("options") or {}).get("question_masked")) and PLACEHOLDER.search(q) is not None


def cannot_resume(run: dict, how: str) -> str:
    return (f"run {run['id']}'s question held secrets and was recorded masked (redaction was on), "
            f"so it cannot be re-asked from the record; {how}")
