"""`rlm mine REPO QUESTION...`: requirements mining with checked evidence.

Code scopes first, for each question: the walker's file list, a keyword search (question words,
lightly stemmed, with a few programming synonyms; words found in too many files only rank),
then one hop over shared identifiers (names defined where the keywords hit, searched across
the repository: a question about rate limits reaches the line that instantiates the rate
limiter). Candidate lines are the hits with a little context (a whole short function when the
hit is its signature), shown numbered ``[n]``.

With at most 30 relevant files the question gets one call (no fan-out, and the report says
so); more files, or candidates too long for one call, fan out over groups of files. The model
only picks numbers and phrases a short claim; code maps each number to ``path:line``, takes
the quote from the file and checks it with :mod:`rlm.evidence`.

Facts are ``verified`` only when the check passes *and* the line is code; a line of
documentation, a comment or docstring, an import or a bare signature makes the fact
``inferred`` (it rests on docs or names). The two are never mixed. A question without a
verified fact gets the placeholder ``[fact: <question>]``, never a guess.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass, field
from typing import Callable

import anyio

from rlm.engine.budget import Budget
from rlm.engine.mapper import Outcome, map_items
from rlm.errors import UsageError
from rlm.evidence import EvidenceStats
from rlm.models.base import Model
from rlm.repo_chunks import block_end, is_doc_file, is_test_file
from rlm.repo_run import (
    STOPWORDS, Candidate, ReadTracker, RepoCorpus, call_task, check_pick, est_tokens,
    files_statement, is_weak_model, new_run_id, pack_candidates, render_candidates, sane_claim,
    window_chars, with_model,
)
from rlm.run import ledger
from rlm.run.events import Plan, UnitDone, to_sink
from rlm.schemas import Coverage, Estimate, FailedChunk, Finding, GateInfo, Source, UsageInfo
from rlm.schemas_repo import EvidenceCounts, Fact, MineReport, QuestionResult

RECIPE = "requirements-mining"
ONE_CALL_MAX_FILES = 30
MAX_RELEVANT_FILES = 200  # beyond this, the lowest-ranked files are only scanned (declared)
MAX_HITS_PER_FILE = 60
MAX_IDENTIFIERS = 12
MAX_IDENT_LINES = 20

SYNONYMS = {
    "maximum": ["max"], "largest": ["max"], "biggest": ["max"], "most": ["max"],
    "minimum": ["min"], "smallest": ["min"], "least": ["min"],
    "length": ["len"], "lifetime": ["ttl"], "expire": ["ttl", "expir"], "expiry": ["ttl", "expir"],
    "expiration": ["ttl", "expir"], "throttle": ["rate"], "throttled": ["rate"],
    "hashed": ["hash"], "hashing": ["hash"], "encrypted": ["encrypt", "crypt"],
    "configuration": ["config"], "settings": ["config", "setting"], "database": ["db"],
}
_GENERIC_IDENTS = frozenset({"main", "run", "get", "set", "init", "__init__", "self", "cls",
                             "name", "value", "data", "result", "test", "setup", "call"})


@dataclass
class MineOptions:
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    concurrency: int = 4
    max_tokens: int | None = None
    max_calls: int | None = None
    max_wall_s: float | None = None
    timeout: float = 120.0
    dry_run: bool = False
    no_cache: bool = False  # fresh calls (answers still stored)
    usable_fraction: float = 0.5
    chunk_chars: int | None = None
    one_call_max_files: int = ONE_CALL_MAX_FILES
    weak_model: bool | None = None  # None: the embedded model is weak (its claims are checked)
    redact: bool | None = None  # None: RLM_REDACT, config, or on for non-loopback endpoints


# ------------------------------------------------------------------------------ keywords


def stem(w: str) -> str:
    w = w.lower()
    if len(w) > 5 and w.endswith("ies"):
        return w[:-3]
    if len(w) > 5 and w.endswith("ing"):
        return w[:-3]
    if len(w) > 4 and w.endswith("ed") and not w.endswith("eed"):
        return w[:-2]
    if len(w) > 4 and w.endswith("es") and w[-3] in "sxz" or w.endswith(("ches", "shes")):
        return w[:-2]
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    if len(w) > 4 and w.endswith("y"):
        return w[:-1]
    return w


@dataclass
class Keyword:
    word: str
    patterns: list[str]
    rx: re.Pattern = field(init=False)

    def __post_init__(self) -> None:
        alts = []
        for p in self.patterns:
            e = re.escape(p)
            alts.append(e if len(p) >= 4 else rf"(?<![a-z0-9]){e}(?![a-z0-9])")
        self.rx = re.compile("|".join(alts))

    def hits(self, lower_line: str) -> bool:
        return self.rx.search(lower_line) is not None


def keywords(question: str) -> list[Keyword]:
    """Content words of a question, stemmed, with a few programming synonyms."""
    out: list[Keyword] = []
    seen: set[str] = set()
    for tok in re.findall(r"[A-Za-z][A-Za-z0-9_\-]*", question):
        for w in [tok] + re.split(r"[-_]+", tok):
            lw = w.lower()
            if len(lw) < 3 or lw in STOPWORDS or lw in seen:
                continue
            seen.add(lw)
            pats = [stem(lw)] + SYNONYMS.get(lw, [])
            pats = [p for p in dict.fromkeys(pats) if len(p) >= 2]
            out.append(Keyword(lw, pats))
    return out


# ------------------------------------------------------------------------------ scoping


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


_DEF = re.compile(r"^\s*(?:async\s+)?(?:def|class|function|func|fn)\s+([A-Za-z_]\w*)")
_CONST = re.compile(r"^\s{0,4}([A-Z][A-Z0-9_]{3,})\s*(?::[^=]+)?=(?!=)")
_IMPORT = re.compile(r"^\s*(?:from\s+\S+\s+import\b|import\s+\S|#include|using\s|use\s+\S+;|"
                     r"(?:const|let|var)\s+\w+\s*=\s*require\()")
_SIGNATURE = re.compile(r"^\s*(?:async\s+)?(?:def|class|function|func|fn)\s+\w+")


def basis_of(corpus: RepoCorpus, path: str, line: int) -> str:
    if corpus.basis(path, line, line) == "docs":
        return "docs"
    text = corpus.lines(path)[line - 1]
    if _IMPORT.match(text):
        return "names"
    if _SIGNATURE.match(text) and "=" not in text:
        return "names"
    return "code"


class _Scoper:
    """Keyword search over every kept file, once per question (code only)."""

    def __init__(self, corpus: RepoCorpus):
        self.c = corpus
        self.paths = [f.path for f in corpus.files if corpus.lines(f.path)]
        self.lower = {p: [s.lower() for s in corpus.lines(p)] for p in self.paths}

    def scope(self, question: str, max_files_one_call: int, max_chars: int) -> Scope:
        kws = keywords(question)
        sc = Scope(question, kws)
        if not kws:
            sc.why = "the question has no content words to search for"
            return sc
        n_files = len(self.paths)
        hits: dict[str, dict[str, list[int]]] = {}  # path -> kw -> lines
        path_hits: dict[str, set[str]] = {}
        df: dict[str, int] = {k.word: 0 for k in kws}
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
                hits[p] = per
                path_hits[p] = ph
                for w in set(per) | ph:
                    df[w] += 1
        limit = max(5, int(0.4 * n_files))
        common = {w for w, d in df.items() if d > limit}
        specific = [k for k in kws if k.word not in common and df[k.word] > 0]
        weak = False
        if not specific:  # only common words matched: rank by them, and say so
            specific = [k for k in kws if df[k.word] > 0]
            common = set()
            weak = True
        sc.common = sorted(common)
        spec_words = {k.word for k in specific}
        idf = {w: math.log(1 + n_files / max(1, df[w])) for w in df}
        score: dict[str, float] = {}
        lines_of: dict[str, set[int]] = {}
        for p, per in hits.items():
            s = sum(idf[w] for w in per if w in spec_words) + sum(
                idf[w] for w in path_hits[p] if w in spec_words)
            if s <= 0:
                continue
            # distinct keywords in one file count most; common words only add a little; lines
            # where two keywords meet (e.g. "default" and "timeout") add more
            s += 0.1 * sum(idf[w] for w in per if w in common)
            line_kws: dict[int, int] = {}
            for ls in per.values():
                for ln in ls:
                    line_kws[ln] = line_kws.get(ln, 0) + 1
            s += 0.5 * min(5, sum(1 for v in line_kws.values() if v >= 2))
            score[p] = s
            lines_of[p] = {ln for w, ls in per.items() if w in spec_words for ln in ls}
        # one hop over shared identifiers: names defined where the keywords hit, or in files
        # whose path matches a keyword
        idents: dict[str, float] = {}
        for p in score:
            src = self.c.lines(p)
            rows = range(1, len(src) + 1) if path_hits[p] & spec_words else sorted(lines_of[p])
            for i in rows:
                m = _DEF.match(src[i - 1]) or _CONST.match(src[i - 1])
                if m:
                    name = m.group(1)
                    if len(name) >= 5 and name.lower() not in _GENERIC_IDENTS \
                            and not name.startswith("test"):
                        idents[name] = max(idents.get(name, 0.0), score[p])
        chosen = [] if weak else sorted(idents, key=lambda n: (-idents[n], -len(n), n))[:MAX_IDENTIFIERS]
        sc.idents = chosen
        for name in chosen:
            rx = re.compile(rf"(?<![\w]){re.escape(name)}(?![\w])")
            found = 0
            for p in self.paths:
                if is_doc_file(p):
                    continue
                for i, s in enumerate(self.c.lines(p), 1):
                    if name in s and rx.search(s):
                        if p not in score:
                            score[p] = 0.5
                            lines_of[p] = set()
                        if i not in lines_of[p]:
                            lines_of[p].add(i)
                            found += 1
                        if found >= MAX_IDENT_LINES:
                            break
                if found >= MAX_IDENT_LINES:
                    break
        ranked = sorted(score, key=lambda p: (-score[p], is_doc_file(p), is_test_file(p), p))
        if weak:
            ranked = ranked[:max_files_one_call]
        if len(ranked) > MAX_RELEVANT_FILES:
            sc.cut_files = len(ranked) - MAX_RELEVANT_FILES
            ranked = ranked[:MAX_RELEVANT_FILES]
        sc.files = ranked
        # candidate lines: hits with context (a short block after a signature)
        for p in ranked:
            src = self.c.lines(p)
            hl = sorted(lines_of[p])[:MAX_HITS_PER_FILE]
            show: set[int] = set()
            for i in hl:
                if _DEF.match(src[i - 1]):
                    show.update(range(i, block_end(p, src, i, cap=12) + 1))
                else:
                    show.update(range(max(1, i - 1), min(len(src), i + 1) + 1))
            for i in sorted(show):
                if src[i - 1].strip():
                    sc.cands.append(Candidate(p, i, src[i - 1], "keyword"))
        kw_text = ", ".join(f"`{k.word}`" for k in specific)
        sc.why = ("only words common to many files matched: " if weak else "") + (
                  f"keywords {kw_text}" + (f" (too common to scope: {', '.join(sc.common)})"
                                            if sc.common else "")
                  + (f"; shared identifiers {', '.join(sc.idents[:6])}" if sc.idents else ""))
        if not sc.cands:
            sc.note = (f"code search found no line for {kw_text or 'the question'} in "
                       f"{n_files} files; no model call was made")
            return sc
        groups = pack_candidates(sc.cands, max_chars)
        if len(ranked) > max_files_one_call:
            # fan-out: groups of whole files
            sc.fanout = True
            sc.groups = groups
            sc.note = (f"{len(ranked)} relevant files (more than {max_files_one_call}): fan-out "
                       f"over {len(groups)} call(s) of their {len(sc.cands)} candidate lines")
        elif len(groups) == 1:
            sc.groups = groups
            sc.note = (f"no fan-out was needed: {len(ranked)} relevant file(s) (at most "
                       f"{max_files_one_call}); their {len(sc.cands)} candidate lines fit in one call")
        else:
            sc.fanout = True
            sc.groups = groups
            sc.note = (f"{len(ranked)} relevant file(s), but their {len(sc.cands)} candidate lines "
                       f"do not fit one call: {len(groups)} calls")
        if sc.cut_files:
            sc.note += (f"; the {sc.cut_files} lowest-ranked matching files were only scanned by "
                        "code")
        return sc


# ------------------------------------------------------------------------------ the run


@dataclass
class _Call:
    id: str
    q: int
    cands: list[Candidate]
    mapping: dict
    material: str


class _Mine:
    def __init__(self, corpus: RepoCorpus, questions: list[str], opts: MineOptions, model: Model,
                 budget: Budget, emit: Callable[[str, dict], None]):
        self.c, self.qs, self.opts, self.model, self.budget = (
            corpus, questions, opts, model, budget)
        self.emit = to_sink(emit)  # typed events to the (kind, data) sinks
        self.max_chars = window_chars(model, opts.usable_fraction, opts.chunk_chars)
        self.stats = EvidenceStats()
        self.read = ReadTracker()
        self.results = [QuestionResult(question=q) for q in questions]
        self.scopes: list[Scope] = []
        self.calls: list[_Call] = []
        self.failed: list[FailedChunk] = []
        self.failed_paths: set[str] = set()
        self.ok_paths: set[str] = set()
        self.chunks_ok = 0
        self.weak = is_weak_model(model) if opts.weak_model is None else bool(opts.weak_model)
        self.dropped = 0

    def plan(self) -> None:
        scoper = _Scoper(self.c)
        n = 0
        for qi, q in enumerate(self.qs):
            sc = scoper.scope(q, self.opts.one_call_max_files, self.max_chars)
            self.scopes.append(sc)
            r = self.results[qi]
            r.keywords = [k.word for k in sc.keywords]
            r.relevant_files = sc.files
            r.candidate_lines = len(sc.cands)
            r.fanout = sc.fanout
            r.scope = "; ".join(x for x in (sc.why, sc.note) if x)
            r.calls = len(sc.groups)
            for g in sc.groups:
                n += 1
                text, mapping = render_candidates(g)
                self.calls.append(_Call(f"q{qi + 1}-{n:04d}", qi, g, mapping, text))

    async def run(self, scope) -> None:
        self.emit(Plan(len(self.calls), self.opts.concurrency))

        async def work(call: _Call):
            sc = self.scopes[call.q]
            return await call_task(self.model, RECIPE, "answer", self.budget, self.opts.timeout,
                                   question=sc.question, why=sc.why, material=call.material)

        def done(o: Outcome) -> None:
            call: _Call = o.item
            r = self.results[call.q]
            if not o.ok:
                r.failed.append(f"{call.id}: {o.error}")
                paths = list(dict.fromkeys(c.path for c in call.cands))
                self.failed_paths.update(paths)
                self.failed.extend(ledger.failed_parts(
                    call.id, ledger.ranges_of((c.path, c.line) for c in call.cands), o.status,
                    o.error))
                self._done(call, o)
                return
            self.chunks_ok += 1
            for c in call.cands:
                self.read.add(c.path, c.line, c.line)
                self.ok_paths.add(c.path)
            seen = {f.evidence_path for f in r.verified + r.inferred}
            for pk in o.result.picks:
                cand, ev = check_pick(self.c, call.mapping, pk.n, getattr(pk, "quote", ""))
                self.stats.add(ev)
                if cand is None or not ev.ok:
                    r.rejected.append({"claim": pk.claim, "cited": ev.evidence_path if cand else
                                       f"[{pk.n}]", "reason": ev.reason})
                    continue
                if ev.evidence_path in seen:
                    continue
                if self.weak and not sane_claim(pk.claim, cand.text):
                    self.dropped += 1  # a weak model's claim that is not about its line
                    r.rejected.append({"claim": pk.claim[:120], "cited": ev.evidence_path,
                                       "reason": "the claim does not mention the picked line "
                                       "(weak model): dropped"})
                    continue
                seen.add(ev.evidence_path)
                basis = basis_of(self.c, ev.path, ev.line_start)
                quote = "\n".join(self.c.lines(ev.path)[ev.line_start - 1:ev.line_end]).strip()
                fact = Fact(claim=pk.claim.strip() or "(no claim given)",
                            evidence_path=ev.evidence_path, quote=quote[:300],
                            confidence="verified" if basis == "code" else "inferred",
                            basis=basis, note=ev.reason)
                if basis == "docs":
                    fact.note = "rests on documentation or comments, not on code"
                elif basis == "names":
                    fact.note = "rests on a name (an import or a signature), not on what the code does"
                (r.verified if fact.confidence == "verified" else r.inferred).append(fact)
            self._done(call, o)

        await map_items(self.calls, work, key=lambda c: c.id, concurrency=self.opts.concurrency,
                        budget=self.budget, on_outcome=done, cancel_scope=scope)

    def _done(self, call: "_Call", o: Outcome) -> None:
        unit = ledger.unit_of(call.id, ledger.ranges_of((c.path, c.line) for c in call.cands))
        self.emit(UnitDone.of(unit, o.status, o.reason, self.budget.usage))

    def report(self, t0: float, run_id: str) -> MineReport:
        c = self.c
        for r in self.results:
            if not r.verified:
                r.placeholder = f"[fact: {r.question}]"
        read = set(self.ok_paths)
        failed = self.failed_paths - read
        fcov = c.file_coverage(read, failed)
        cov = Coverage(chunks_total=len(self.calls), chunks_ok=self.chunks_ok,
                       chunks_failed=self.failed, bytes_total=c.walk.total_bytes,
                       lines_total=c.walk.total_lines, skipped=fcov.skipped_files,
                       bytes_scanned_by_code=c.walk.total_bytes,
                       lines_scanned_by_code=c.walk.total_lines)
        cov.lines_read_by_model = self.read.total_lines()
        cov.bytes_read_by_model = self.read.total_bytes(c)
        cov.interrupted = self.budget.interrupted
        body = [files_statement(fcov),
                f"Code searched all {c.walk.total_lines:,} lines of the kept files; the model read "
                f"{cov.lines_read_by_model:,} candidate lines in {self.chunks_ok} of "
                f"{len(self.calls)} call(s)."]
        cuts = [s for s in self.scopes if s.cut_files]
        if cuts:
            cov.declared.append(f"{len(cuts)} question(s) matched more than {MAX_RELEVANT_FILES} "
                                "files; the lowest-ranked were only scanned by code")
        ledger.close(cov, body, what="answers", dry_run=self.opts.dry_run)
        findings: list[Finding] = []
        k = 0
        for qi, r in enumerate(self.results, 1):
            for f in r.verified + r.inferred:
                k += 1
                path, _, rng = f.evidence_path.rpartition(":")
                a, _, b = rng.partition("-")
                findings.append(Finding(
                    id=f"f{k}", claim=f.claim, evidence=f.quote,
                    source=Source(path=path, line_start=int(a), line_end=int(b or a)),
                    verified=f.confidence == "verified", chunk=f"q{qi}", label=f.basis,
                    group=f"q{qi}", note=f.note or None))
        fan = any(s.fanout for s in self.scopes)
        u = self.budget.usage
        reasons = [f"repository: {fcov.total} files listed by the walker ({c.walk.method}), "
                   f"{len(c.files)} kept; code scoped each question by keyword search and shared "
                   "identifiers"]
        for i, (q, r) in enumerate(zip(self.qs, self.results), 1):
            reasons.append(f"Q{i}: {r.scope}")
        nv = sum(len(r.verified) for r in self.results)
        ni = sum(len(r.inferred) for r in self.results)
        npl = sum(1 for r in self.results if r.placeholder)
        rep = MineReport(
            command="mine", question=" | ".join(self.qs), corpus=c.corpus_info(),
            strategy="fanout" if fan else "grep",
            gate=GateInfo(reasons=reasons, estimate=self.estimate),
            answer=(f"{len(self.qs)} question(s): {nv} verified fact(s), {ni} inferred, "
                    f"{npl} placeholder(s). Evidence: {self.stats.verified} verified, "
                    f"{self.stats.corrected} corrected, {self.stats.rejected} rejected."),
            findings=findings, coverage=cov, questions=self.results, files=fcov,
            evidence=EvidenceCounts(**self.stats.as_dict()),
            usage=UsageInfo(calls=u.calls, prompt_tokens=u.prompt_tokens,
                            completion_tokens=u.completion_tokens, cached_calls=u.cached_calls,
                            wall_s=round(time.monotonic() - t0, 3)),
            model=getattr(self.model, "name", ""), run_id=run_id, dry_run=self.opts.dry_run)
        return rep


async def mine_async(repo: str, questions: list[str], opts: MineOptions | None = None,
                     model: Model | None = None,
                     on_event: Callable[[str, dict], None] | None = None,
                     handle_sigint: bool = False) -> MineReport:
    opts = opts or MineOptions()
    qs = [q.strip() for q in questions if q and q.strip()]
    if not qs:
        raise UsageError("give at least one question")
    t0 = time.monotonic()
    corpus = RepoCorpus(repo)
    budget = Budget(opts.max_tokens, opts.max_calls, opts.max_wall_s)
    run_id = new_run_id()

    async def go(m: Model, scope, b: Budget) -> MineReport:
        run = _Mine(corpus, qs, opts, m, b, on_event or (lambda e, d: None))
        run.plan()
        run.estimate = Estimate(calls=len(run.calls),
                                prompt_tokens=sum(est_tokens(len(x.material)) + 450
                                                  for x in run.calls))
        if not opts.dry_run:
            await run.run(scope)
        return run.report(t0, run_id)

    return await with_model(opts, go, model, handle_sigint, budget)


def mine(repo: str, questions: list[str], opts: MineOptions | None = None, **kw) -> MineReport:
    """Synchronous wrapper around :func:`mine_async`."""
    return anyio.run(lambda: mine_async(repo, questions, opts, **kw))


# ------------------------------------------------------------------------------ Markdown


def _cell(text: str, width: int = 160) -> str:
    t = " ".join(text.split()).replace("|", "\\|").replace("`", "'")
    return t if len(t) <= width else t[:width] + "…"


def _link(base: str, ep: str) -> str:
    path, _, rng = ep.rpartition(":")
    a, _, b = rng.partition("-")
    target = (base.rstrip("/") + "/" if base else "") + path + f"#L{a}" + (f"-L{b}" if b else "")
    return f"[`{ep}`]({target.replace(' ', '%20')})"


def _table(facts: list[Fact], base: str) -> list[str]:
    out = ["| # | Claim | Evidence | Quote (from the file) |", "|---:|---|---|---|"]
    for i, f in enumerate(facts, 1):
        out.append(f"| {i} | {_cell(f.claim, 200)} | {_link(base, f.evidence_path)} | "
                   f"`{_cell(f.quote, 120)}` |")
    return out


def mine_markdown(rep: MineReport, link_base: str = "") -> str:
    out = [f"# Requirements: `{rep.corpus.path}`"]
    ev = rep.evidence
    out.append(f"{len(rep.questions)} question(s); {rep.corpus.files} files kept. Model: "
               f"{rep.model or '-'}. Evidence checked by code: {ev.verified} verified, "
               f"{ev.corrected} corrected, {ev.rejected} rejected.")
    out.append("Facts are **verified** only when code found the quoted code at the cited lines; "
               "**inferred** facts rest on names or documentation. A question without a verified "
               "fact keeps its placeholder.")
    if rep.dry_run:
        out.append(f"**Dry run**: no model call was made. Estimate: {rep.gate.estimate.calls} "
                   f"call(s), ~{rep.gate.estimate.prompt_tokens:,} prompt tokens.")
    for i, q in enumerate(rep.questions, 1):
        out.append(f"## {i}. {q.question}")
        out.append(f"_Scope (code): {q.scope}._")
        if q.verified:
            out.append("**Verified facts**")
            out.extend(["\n".join(_table(q.verified, link_base))])
        else:
            out.append(f"`{q.placeholder or f'[fact: {q.question}]'}` — no verified fact"
                       + (" (dry run)" if rep.dry_run else "") + ".")
        if q.inferred:
            out.append("**Inferred** (rests on names or documentation; not verified)")
            out.extend(["\n".join(_table(q.inferred, link_base))])
        if q.rejected:
            out.append(f"Rejected ({len(q.rejected)}): " + "; ".join(
                f"{_cell(x['claim'], 80)} — {x['cited']}: {_cell(x['reason'], 120)}"
                for x in q.rejected[:6]) + ".")
        if q.failed:
            out.append("Failed calls: " + "; ".join(q.failed[:5]) + ".")
    out.append("## Coverage")
    fc = rep.files
    if fc.skipped_files:
        out.append("Skipped: " + "; ".join(f"`{x['path']}` ({x['reason']})"
                                           for x in fc.skipped_files[:25])
                   + (f"; and {len(fc.skipped_files) - 25} more" if len(fc.skipped_files) > 25 else "")
                   + ".")
    out.append(f"_{rep.coverage.statement}_")
    u = rep.usage
    if not rep.dry_run:
        out.append(f"Usage: {u.calls} call(s), {u.prompt_tokens:,} prompt + {u.completion_tokens:,} "
                   f"completion tokens, {u.wall_s:.1f}s. Run: {rep.run_id}.")
    return "\n\n".join(out) + "\n"
