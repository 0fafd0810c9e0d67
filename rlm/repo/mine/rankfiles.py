"""Which files a free question is about, ranked by code with no model: Okapi BM25 (the
constants and term normalisation of rlm.pipeline.codeonly.rank) over one small document per file made of
what names it: its path words, the names it defines (split at ``_`` and case changes) and its
docstrings / leading comment lines. Every question term counts, weighted by its rarity, so a
question is not scoped by one keyword."""

from __future__ import annotations

import math
import re

from rlm.pipeline.codeonly.rank import B, K1, query_terms, tokens
from rlm.repo.mine.scope import DEF
from rlm.repo.corpus import RepoCorpus

_PARTS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_DOC = re.compile(r'^\s*(?:"""|\'\'\'|#|//|\*)\s?(.*)')
MAX_DOC_LINES = 40


def _words(name: str) -> list[str]:
    return [p.lower() for p in _PARTS.findall(name)]


def file_document(c: RepoCorpus, path: str) -> list[str]:
    """The names of a file: path words, defined names and their parts, doc/comment lines."""
    words = [w for part in re.split(r"[/._-]", path) for w in _words(part)]
    docs = 0
    for ln in c.lines(path):
        m = DEF.match(ln)
        if m:
            words += [m.group(1).lower(), *_words(m.group(1))]
            continue
        d = _DOC.match(ln)
        if d and docs < MAX_DOC_LINES:
            docs += 1
            words += [w.lower() for w in tokens(d.group(1))]
    return tokens(" ".join(words))


def rank_files(c: RepoCorpus, question: str, top: int = 10) -> tuple[list[str], list[str]]:
    """(the best files, best first; the question's terms). Terms match by prefix, as in rank."""
    terms = query_terms(question)
    docs = {f.path: file_document(c, f.path) for f in c.files if c.lines(f.path)}
    if not terms or not docs:
        return [], terms
    avg = sum(len(d) for d in docs.values()) / len(docs) or 1.0
    tf = {p: {t: sum(w.startswith(t) for w in d) for t in terms} for p, d in docs.items()}
    df = {t: sum(1 for p in docs if tf[p][t]) for t in terms}
    n = len(docs)
    score = {}
    for p, d in docs.items():
        s = 0.0
        for t in terms:
            f = tf[p][t]
            if f:
                idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                s += idf * f * (K1 + 1) / (f + K1 * (1 - B + B * len(d) / avg))
        if s > 0:
            score[p] = s
    return sorted(score, key=lambda p: (-score[p], p))[:top], terms


def named_definitions(c: RepoCorpus, files: list[str], terms: list[str], top: int = 5,
                      limit: int = 12) -> list[str]:
    """The definitions in the best-ranked files that a question term names (one of the name's
    parts, matched by prefix as the ranking matches), most parts named first:
    "`open_session` (pkg/sessions.py:13)"."""
    found: list[tuple[float, int, str]] = []
    words = [t for t in terms if len(t) > 3]
    for rank, path in enumerate(files[:top]):
        for i, ln in enumerate(c.lines(path), 1):
            m = DEF.match(ln)
            parts = [p for p in _words(m.group(1)) if len(p) > 3] if m else []
            hits = sum(any(p.startswith(t) or t.startswith(p) for t in words) for p in parts)
            if hits:
                found.append((-hits / len(parts), rank, f"`{m.group(1)}` ({path}:{i})"))
    return [x for *_, x in sorted(found)[:limit]]
