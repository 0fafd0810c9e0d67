"""Grep-first: anchors from the question, then a regex search over the mmap'd bytes.

Anchors are the things a person would grep for: quoted strings, identifiers such as
`TXN-4444`, `ERR_CONN_RESET`, `0x1f`, error codes. Search is Python's `re` on bytes (the C
engine walks the mmap; measured no slower than rg for one file here).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rlm.corpus.idents import blank, find_idents
from rlm.corpus.source import TextSource
from rlm.engine.interrupt import checkpoint

_QUOTED = re.compile(r"\"([^\"]{2,200})\"|'([^']{2,200})'|`([^`]{2,200})`")
# identifiers mixing letters and digits, or joined with - _ . (TXN-4444, ERR_CONN, E1234, 0x1f)
_IDENT = re.compile(r"(?<![\w-])(?=[\w.-]*\d)(?=[\w.-]*[A-Za-z])[A-Za-z0-9][\w.-]*[A-Za-z0-9](?![\w-])")
_SNAKE = re.compile(r"(?<![\w-])[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+(?![\w-])")
_CONST = re.compile(r"(?<![\w-])[A-Z][A-Z0-9]{3,}(?![\w-])")
_LONGNUM = re.compile(r"(?<![\w.-])\d{4,}(?![\w.-])")
# capitals written together are one phrase the log writes (`RECEIVED SIGNAL`, `OUT OF MEMORY`):
# one anchor, never a word each (lines holding either word answered another question)
_CONST_RUN = re.compile(r"(?<![\w-])[A-Z][A-Z0-9]{1,}(?: [A-Z][A-Z0-9]{1,})+(?![\w-])")
# weaker candidates: ordinary-looking words that may still be keys (keen-jacket, userId,
# auth.service). Only a count over the corpus can tell `keen-jacket` from `follow-up`
# (rlm.corpus.rarity), so they become anchors only when rare there.
_HYPHENATED = re.compile(r"(?<![\w-])[A-Za-z]+(?:-[A-Za-z]+)+(?![\w-])")
_CAMEL = re.compile(r"(?<![\w-])[a-z]+(?:[A-Z][a-z0-9]*)+(?![\w-])|(?<![\w-])[A-Z][a-z0-9]+"
                    r"(?:[A-Z][a-z0-9]*)+(?![\w-])")
_DOTTED = re.compile(r"(?<![\w.@/-])[A-Za-z][\w-]*(?:[.@/][A-Za-z][\w-]*)+(?![\w@/-]|\.\w)")
_NOT_ANCHORS = {"HTTP", "JSON", "HTML", "WHAT", "WHEN", "WHERE", "WHICH", "THIS", "THAT", "INFO",
                "DEBUG", "WARN", "ERROR"}


def extract_anchors(question: str) -> list[str]:
    """Literal strings worth grepping for, in question order, deduplicated."""
    found: list[str] = []
    for m in _QUOTED.finditer(question):
        found.append(next(g for g in m.groups() if g))
    rest = _QUOTED.sub(" ", question)
    ids = find_idents(rest)  # IPs, node ids, paths...: whole, before the patterns below
    found += [tok for _, _, tok, _ in ids]
    rest = blank(rest, [(a, b) for a, b, _, _ in ids])
    phrases = [(m.start(), m.end(), m.group(0)) for m in _CONST_RUN.finditer(rest)
               if sum(len(w) >= 3 and w not in _NOT_ANCHORS for w in m.group(0).split()) >= 2]
    found += [p for _, _, p in phrases]
    rest = blank(rest, [(a, b) for a, b, _ in phrases])
    for rx in (_IDENT, _SNAKE, _CONST, _LONGNUM):
        for m in rx.finditer(rest):
            tok = m.group(0).strip(".")
            if tok.upper() in _NOT_ANCHORS or len(tok) < 3:
                continue
            found.append(tok)
    out: list[str] = []
    for a in found:
        if a not in out and not any(a in b for b in out):
            out = [b for b in out if b not in a]
            out.append(a)
    return out


def candidate_anchors(question: str) -> list[str]:
    """Tokens that might be keys but look like ordinary words (hyphenated pairs, camelCase,
    dotted names): anchors only if the corpus says they are rare. Excludes extract_anchors'."""
    strong = extract_anchors(question)
    rest = _QUOTED.sub(" ", question)
    out: list[str] = []
    for rx in (_HYPHENATED, _CAMEL, _DOTTED):
        for m in rx.finditer(rest):
            tok = m.group(0)
            if len(tok) < 5 or tok in out or any(tok.lower() in a.lower() for a in strong):
                continue
            out.append(tok)
    return out


@dataclass
class GrepResult:
    anchors: list[str]
    hit_lines: list[int] = field(default_factory=list)  # 1-based, sorted, unique
    hits_by_anchor: dict[str, int] = field(default_factory=dict)
    truncated: bool = False  # more hits than max_hits; the rest were not collected
    bytes_scanned: int = 0
    failed: list = field(default_factory=list)  # shards no worker could search (Ray executor)


def search(src: TextSource, anchors: list[str], max_hits: int = 5000) -> GrepResult:
    res = GrepResult(anchors=anchors)
    if not anchors:
        return res
    pats = [re.escape(a.encode("utf-8")) for a in anchors]
    pattern = b"|".join(pats)
    lines: set[int] = set()
    counts = {a: 0 for a in anchors}
    lowered = {a.lower().encode(): a for a in anchors}
    for at, text in _matches(src, pattern, max_hits, res):
        checkpoint(at, src.size)
        ln = src.line_of_offset(at)
        counts[lowered.get(text, anchors[0])] += 1
        if ln not in lines:
            if len(lines) >= max_hits:
                res.truncated = True
                break
            lines.add(ln)
    res.hit_lines = sorted(lines)
    res.hits_by_anchor = counts
    res.bytes_scanned = src.size
    return res


def _matches(src: TextSource, pattern: bytes, max_hits: int, res: GrepResult):
    """(offset, lowered match) in file order: over the mmap here, or, on the Ray executor,
    shard by shard on the cluster (rlm.corpus.grep_scan; failed shards go to `res.failed`)."""
    from rlm.executor import current

    if current().name == "ray" and src.size:
        from rlm.corpus.grep_scan import grep_shards

        hits, res.failed = grep_shards(str(src.path), pattern, max_hits)
        yield from hits
        return
    for m in re.compile(pattern, re.IGNORECASE).finditer(src.data):
        yield m.start(), m.group(0).lower()


def regions(hit_lines: list[int], context: int, last_line: int) -> list[tuple[int, int]]:
    """Merge hits with ±context lines into disjoint (start, end) ranges."""
    from rlm.corpus.lines import merge_ranges

    return merge_ranges((max(1, ln - context), min(last_line, ln + context)) for ln in hit_lines)
