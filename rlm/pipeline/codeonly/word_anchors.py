"""No model: a question's plain words that are rare in the corpus become anchors.

`which port does ssh use?` names no id, yet `ssh` is on one line of /etc/services: with no
model to read, searching for it answers completely (the timeline of its lines), where ranked
passages would only say "reading was needed" (exit 3). Each plain word is counted by code, with
the same bounded scan and rarity rule as weak candidates (rlm.corpus.rarity): a word on many
lines is not an anchor, so the run ranks, profiles or fans out as before.

Only for questions that name no key at all: when the question names one (an id, `keen-jacket`)
and it is absent or common, its plain words (`magic`, `number`) must not stand in for it.
"""

from __future__ import annotations

import re

from rlm.pipeline.codeonly.rank import STOPWORDS
from rlm.corpus.grep import candidate_anchors, extract_anchors
from rlm.corpus.rarity import Rarity, rare_candidates
from rlm.corpus.source import TextSource

MAX_WORDS = 8  # a question's first content words; each costs one bounded count
_PLAIN = re.compile(r"(?<![\w.@/-])[A-Za-z]{3,}(?![\w@/-]|\.\w)")
# words that frame a question rather than name its subject
_FRAME = frozenset("""mention mentioned mentions provided text file files document documents
corpus line lines say said says find show list give know need please value values name names
number numbers kind type part parts look get got way ways time times one two first last""".split())


def word_candidates(question: str) -> list[str]:
    """Plain content words (lowercase, in order), or none when the question names a key."""
    if extract_anchors(question) or candidate_anchors(question):
        return []
    out: list[str] = []
    for m in _PLAIN.finditer(question):
        w = m.group(0).lower()
        if w in STOPWORDS or w in _FRAME or w in out:
            continue
        out.append(w)
    return out[:MAX_WORDS]


def rare_words(question: str, sources: list[TextSource] | None, total_lines: int) -> list[Rarity]:
    """Each content word counted in the corpus by code (one shared time budget)."""
    words = word_candidates(question)
    if not words or not sources:
        return []
    return rare_candidates(sources, words, total_lines)
