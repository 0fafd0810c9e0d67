"""Code scopes each question before any model call: a keyword search over every kept file
(question words, lightly stemmed, with programming synonyms; words found in too many files only
rank), one hop over shared identifiers (names defined where the keywords hit, searched across the
repository), then candidate lines: the hits with a little context (a whole short function when
the hit is its signature). At most ``one_call_max_files`` relevant files whose candidates fit one
window make one call (no fan-out, and the report says so); else a fan-out over groups."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from rlm.repo.mine.keywords import Keyword, generic_identifiers, keywords
from rlm.repo.candidates import Candidate, pack_candidates
from rlm.repo.corpus import RepoCorpus
from rlm.repo.files import block_end, is_doc_file, is_test_file

MAX_RELEVANT_FILES = 200  # beyond this, the lowest-ranked files are only scanned (declared)
MAX_HITS_PER_FILE = 60
MAX_IDENTIFIERS = 12
MAX_IDENT_LINES = 20

DEF = re.compile(r"^\s*(?:async\s+)?(?:def|class|function|func|fn)\s+([A-Za-z_]\w*)")
CONST = re.compile(r"^\s{0,4}([A-Z][A-Z0-9_]{3,})\s*(?::[^=]+)?=(?!=)")
IMPORT = re.compile(r"^\s*(?:from\s+\S+\s+import\b|import\s+\S|#include|using\s|use\s+\S+;|"
                    r"(?:const|let|var)\s+\w+\s*=\s*require\()")
SIGNATURE = re.compile(r"^\s*(?:async\s+)?(?:def|class|function|func|fn)\s+\w+")


@dataclass
class Scope:
    question: str
    keywords: list[Keyword]
    common: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # relevant, best first
    cut_files: int = 0
    cands: list[Candidate] = field(default_factory=list)
    groups: list[list[Candidate]] = field(default_factory=list)
    idents: list[str] = field(default_factory=list)
    why: str = ""
    fanout: bool = False
    note: str = ""

    @property
    def strategy(self) -> str:
        return "code_only" if not self.groups else "fanout" if self.fanout else "one_call"


def basis_of(corpus: RepoCorpus, path: str, line: int) -> str:
    """What a cited line rests on: code, docs (prose, comments), or names (import, signature)."""
    if corpus.basis(path, line, line) == "docs":
        return "docs"
    text = corpus.lines(path)[line - 1]
    if IMPORT.match(text) or (SIGNATURE.match(text) and "=" not in text):
        return "names"
    return "code"


@dataclass
class _Hits:
    """Where the keywords hit: per file and keyword the lines, path words, document frequency."""

    lines: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    path: dict[str, set[str]] = field(default_factory=dict)
    df: dict[str, int] = field(default_factory=dict)


class Scoper:
    """Keyword search over every kept file, once per question (code only)."""

    def __init__(self, corpus: RepoCorpus):
        self.c = corpus
        self.paths = [f.path for f in corpus.files if corpus.lines(f.path)]
        self.lower = {p: [s.lower() for s in corpus.lines(p)] for p in self.paths}

    def _search(self, kws: list[Keyword]) -> _Hits:
        h = _Hits(df={k.word: 0 for k in kws})
        for p in self.paths:
            # path words: not the top-level folder (usually the project's own name)
            lp = p.lower().split("/", 1)[-1]
            ph = {k.word for k in kws if k.hits(lp)}
            per: dict[str, list[int]] = {}
            for i, s in enumerate(self.lower[p], 1):
                for k in kws:
                    if k.hits(s):
                        per.setdefault(k.word, []).append(i)
            if per or ph:
                h.lines[p], h.path[p] = per, ph
                for w in set(per) | ph:
                    h.df[w] += 1
        return h

    def _rank(self, h: _Hits, spec: set[str], common: set[str]
              ) -> tuple[dict[str, float], dict[str, set[int]]]:
        """Score files: distinct specific keywords count most (idf), common words a little,
        lines where two keywords meet (e.g. "default" and "timeout") more."""
        n_files = len(self.paths)
        idf = {w: math.log(1 + n_files / max(1, d)) for w, d in h.df.items()}
        score: dict[str, float] = {}
        lines_of: dict[str, set[int]] = {}
        for p, per in h.lines.items():
            s = sum(idf[w] for w in per if w in spec) + sum(idf[w] for w in h.path[p] if w in spec)
            if s <= 0:
                continue
            s += 0.1 * sum(idf[w] for w in per if w in common)
            line_kws: dict[int, int] = {}
            for ls in per.values():
                for ln in ls:
                    line_kws[ln] = line_kws.get(ln, 0) + 1
            s += 0.5 * min(5, sum(1 for v in line_kws.values() if v >= 2))
            score[p] = s
            lines_of[p] = {ln for w, ls in per.items() if w in spec for ln in ls}
        return score, lines_of

    def _identifiers(self, h: _Hits, spec: set[str], score: dict[str, float],
                     lines_of: dict[str, set[int]]) -> list[str]:
        """Names defined where the keywords hit, or in files whose path matches a keyword."""
        generic = generic_identifiers()
        idents: dict[str, float] = {}
        for p in score:
            src = self.c.lines(p)
            rows = range(1, len(src) + 1) if h.path[p] & spec else sorted(lines_of[p])
            for i in rows:
                m = DEF.match(src[i - 1]) or CONST.match(src[i - 1])
                if m:
                    name = m.group(1)
                    if len(name) >= 5 and name.lower() not in generic and not name.startswith("test"):
                        idents[name] = max(idents.get(name, 0.0), score[p])
        return sorted(idents, key=lambda n: (-idents[n], -len(n), n))[:MAX_IDENTIFIERS]

    def _hop(self, names: list[str], score: dict[str, float], lines_of: dict[str, set[int]]) -> None:
        """Follow each shared identifier across the repository (a few lines per name)."""
        for name in names:
            rx = re.compile(rf"(?<![\w]){re.escape(name)}(?![\w])")
            found = 0
            for p in (p for p in self.paths if not is_doc_file(p)):
                for i, s in enumerate(self.c.lines(p), 1):
                    if name in s and rx.search(s):
                        if p not in score:
                            score[p], lines_of[p] = 0.5, set()
                        if i not in lines_of[p]:
                            lines_of[p].add(i)
                            found += 1
                        if found >= MAX_IDENT_LINES:
                            break
                if found >= MAX_IDENT_LINES:
                    break

    def _candidates(self, ranked: list[str], lines_of: dict[str, set[int]]) -> list[Candidate]:
        """The hits with context: a short block after a signature, else one line around."""
        out = []
        for p in ranked:
            src = self.c.lines(p)
            show: set[int] = set()
            for i in sorted(lines_of[p])[:MAX_HITS_PER_FILE]:
                if DEF.match(src[i - 1]):
                    show.update(range(i, block_end(p, src, i, cap=12) + 1))
                else:
                    show.update(range(max(1, i - 1), min(len(src), i + 1) + 1))
            out += [Candidate(p, i, src[i - 1], "keyword") for i in sorted(show) if src[i - 1].strip()]
        return out

    def scope(self, question: str, max_files_one_call: int, max_chars: int) -> Scope:
        kws = keywords(question)
        sc = Scope(question, kws)
        if not kws:
            sc.why = "the question has no content words to search for"
            return sc
        h = self._search(kws)
        limit = max(5, int(0.4 * len(self.paths)))
        common = {w for w, d in h.df.items() if d > limit}
        specific = [k for k in kws if k.word not in common and h.df[k.word] > 0]
        weak = not specific
        if weak:  # only common words matched: rank by them, and say so
            specific, common = [k for k in kws if h.df[k.word] > 0], set()
        sc.common = sorted(common)
        spec = {k.word for k in specific}
        score, lines_of = self._rank(h, spec, common)
        sc.idents = [] if weak else self._identifiers(h, spec, score, lines_of)
        self._hop(sc.idents, score, lines_of)
        ranked = sorted(score, key=lambda p: (-score[p], is_doc_file(p), is_test_file(p), p))
        if weak:
            ranked = ranked[:max_files_one_call]
        if len(ranked) > MAX_RELEVANT_FILES:
            sc.cut_files = len(ranked) - MAX_RELEVANT_FILES
            ranked = ranked[:MAX_RELEVANT_FILES]
        sc.files = ranked
        sc.cands = self._candidates(ranked, lines_of)
        kw_text = ", ".join(f"`{k.word}`" for k in specific)
        sc.why = ("only words common to many files matched: " if weak else "") + (
            f"keywords {kw_text}" + (f" (too common to scope: {', '.join(sc.common)})"
                                     if sc.common else "")
            + (f"; shared identifiers {', '.join(sc.idents[:6])}" if sc.idents else ""))
        if not sc.cands:
            sc.note = (f"code search found no line for {kw_text or 'the question'} in "
                       f"{len(self.paths)} files; no model call was made")
            return sc
        _decide(sc, max_files_one_call, max_chars)
        return sc


def _decide(sc: Scope, max_files_one_call: int, max_chars: int) -> None:
    """One call when the relevant files are few and their candidates fit; else a fan-out."""
    sc.groups = pack_candidates(sc.cands, max_chars)
    n, k, g = len(sc.files), len(sc.cands), len(sc.groups)
    if n > max_files_one_call:
        sc.fanout = True
        sc.note = (f"{n} relevant files (more than {max_files_one_call}): fan-out over {g} call(s) "
                   f"of their {k} candidate lines")
    elif g == 1:
        sc.note = (f"no fan-out was needed: {n} relevant file(s) (at most {max_files_one_call}); "
                   f"their {k} candidate lines fit in one call")
    else:
        sc.fanout = True
        sc.note = f"{n} relevant file(s), but their {k} candidate lines do not fit one call: {g} calls"
    if sc.cut_files:
        sc.note += f"; the {sc.cut_files} lowest-ranked matching files were only scanned by code"
