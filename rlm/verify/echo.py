"""Echo detection: an answer that repeats the prompt instead of answering it is invalid output.

Weak models under a JSON grammar sometimes copy their prompt into the answer field (the
instructions, the "Question:" header, the numbered material with its line-number prefixes).
Quoting the evidence is fine and expected; what is refused here is text that only the prompt
itself holds: its instructions and its scaffolding around the material.
"""

from __future__ import annotations

import re

RUN_WORDS = 8  # this many consecutive words of the instructions is an echo, not a coincidence
_HEADERS = re.compile(r"(?im)^\s*(question|verified findings|lines found|text|excerpt|search)"
                      r"\s*(\(|:)")
_PREFIXED = re.compile(r"(?m)(?:^|\s)(\d+\| |\[\d+\] )(\S.{19,}?)(?=\s*(?:\d+\| |\[\d+\] |$))")
_FIELD = re.compile(r'"?\b(answer|cites)"?\s*:\s*("|\[|$)')


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def echo_reason(answer: str, messages: list[dict], material: str = "",
                question: str = "") -> str | None:
    """Why `answer` is an echo of its prompt (None when it is not)."""
    if not answer.strip():
        return None
    if _HEADERS.search(answer):
        return "the answer is an echo of the prompt (it repeats the prompt's headers)"
    if _FIELD.search(answer.strip()[-40:]) or '"answer":' in answer:
        return "the answer is an echo of the prompt (it holds the reply's field names)"
    for m in _PREFIXED.finditer(answer):
        if (m.group(1) + m.group(2))[:40] in material:
            return "the answer is an echo of the prompt (it copies numbered material)"
    # the instructions: every message with the material and the question taken out
    scaffold = "\n".join(str(m.get("content") or "") for m in messages)
    for part in (material, question):
        if part:
            scaffold = scaffold.replace(part, "\n")
    sw = _words(scaffold)
    grams = {" ".join(sw[i:i + RUN_WORDS]) for i in range(len(sw) - RUN_WORDS + 1)}
    aw = _words(answer)
    for i in range(len(aw) - RUN_WORDS + 1):
        run = " ".join(aw[i:i + RUN_WORDS])
        if run in grams:
            return f"the answer is an echo of the prompt's instructions ({run!r})"
    return None
