"""`rlm audit REPO`: a repository audit in rounds, every claim checked against the files.

Round 1 is the module map: one isolated call per module (or module part, see
:mod:`rlm.repo_chunks`) with the module schema (purpose, key APIs, facts, risks; each fact and
risk with ``evidence_path`` ``path:start-end`` and an exact quote). Every citation goes through
:func:`rlm.evidence.check` (verified / corrected / rejected, counted) and must point into what
that call was shown.

Later rounds dig where the map is thin, choosing work by code:
- lenses not yet run (``structure``, ``risks``, ``tests``): code selects candidate lines
  (constants and defaults; risky patterns; test names and assertions), shows them numbered,
  the model picks numbers and phrases a claim, code quotes the file;
- claims whose evidence was rejected: code shows the lines of the cited file that share words
  with the claim and asks which one supports it;
- modules that still have no finding: their files again, one file per call;
- files never read (their call failed): once more.
A finding is new when no finding of the same kind already covers an overlapping range of the
same file (the seen-set, kept by code). The loop stops after two consecutive rounds that add
nothing new, when nothing is left to dig, at ``max_rounds``, or when the budget is spent; the
report says which.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Callable

import anyio

from rlm import evidence
from rlm.corpus.walk import Module, group_modules
from rlm.engine.budget import Budget
from rlm.engine.mapper import Outcome, map_items
from rlm.errors import UsageError
from rlm.corpus.lines import MAX_LINE_CHARS
from rlm.evidence import EvidenceCheck, EvidenceStats, format_evidence_path, parse_evidence_path
from rlm.models.base import Model
from rlm.repo_chunks import RepoChunk, chunk_files, chunk_modules, is_doc_file, is_test_file
from rlm.repo_run import (
    Candidate, ReadTracker, RepoCorpus, call_task, check_pick, est_tokens, files_statement,
    is_weak_model, new_run_id, pack_candidates, render_candidates, window_chars, with_model,
    words,
)
from rlm.repo_run import repetitive as _repetitive
from rlm.repo_run import sane_claim as _sane_claim
from rlm.run import ledger
from rlm.run.events import Plan, UnitDone, to_sink
from rlm.run.outcomes import Status
from rlm.schemas import Coverage, Estimate, FailedChunk, GateInfo, Source, UsageInfo
from rlm.schemas_repo import (
    AuditFinding, AuditInfo, AuditReport, EvidenceCounts, ModuleInfo, RoundInfo,
)

RECIPE = "repo-audit"
LENSES = ("structure", "risks", "tests")
MAX_CANDIDATES_PER_CALL = 40
MAX_CANDIDATES_PER_MODULE = 120
MAX_RECHECKS_PER_ROUND = 12  # (at least one per module)
PHRASE_LINES_PER_CALL = 6
SEVERITY_RANK = {"high": 0, "medium": 1, "low": 2, None: 3}


@dataclass
class AuditOptions:
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    concurrency: int = 4
    max_tokens: int | None = None  # token budget of the whole run
    max_calls: int | None = None
    max_wall_s: float | None = None
    timeout: float = 120.0
    lenses: tuple[str, ...] = LENSES
    max_rounds: int = 6
    dry_run: bool = False
    no_cache: bool = False  # fresh calls (answers still stored)
    usable_fraction: float = 0.5
    chunk_chars: int | None = None  # override the material size of one call
    module_max_files: int = 12
    # A weak model (None: the embedded one) cannot cite nor judge reliably. Then round 1 asks
    # only what each module is for, and in the lens rounds the lines that code's rules select
    # are the findings; the model only phrases their claims (checked to mention the line).
    weak_model: bool | None = None
    redact: bool | None = None  # None: RLM_REDACT, config, or on for non-loopback endpoints


def parse_lenses(spec: str | None) -> tuple[str, ...]:
    if not spec or not spec.strip():
        return LENSES
    out: list[str] = []
    for part in spec.split(","):
        p = part.strip().lower()
        if not p:
            continue
        if p not in LENSES:
            raise UsageError(f"unknown lens {p!r}: choose from {', '.join(LENSES)}")
        if p not in out:
            out.append(p)
    if not out:
        raise UsageError("--lens is empty: choose from " + ", ".join(LENSES))
    return tuple(out)


# ------------------------------------------------------------------------------ candidates


_STRUCTURE = [
    (re.compile(r"^\s{0,4}(?:export\s+)?(?:const\s+|final\s+|static\s+|var\s+|let\s+)?"
                r"[A-Z][A-Z0-9_]{2,}\s*(?::[^=]{1,40})?=(?!=)"), "constant"),
    (re.compile(r"^#define\s+[A-Z][A-Z0-9_]+\s+\S"), "constant"),
    (re.compile(r"^\s{4,8}[a-z_]\w*\s*:\s*[\w\[\], |.]+\s*=\s*(?!=)\S"), "field default"),
    (re.compile(r"^\s*(?:async\s+)?def\s+\w+\(.*=\s*[^=\s]"), "default argument"),
    (re.compile(r"(?:os\.environ|getenv\(|process\.env|env\.get\()"), "environment setting"),
    (re.compile(r"add_argument\(|@\w+\.(?:route|get|post|put|delete|patch)\("), "interface"),
]

_RISKS = [
    (re.compile(r"\b(?:eval|exec)\s*\("), "dynamic code execution", "high"),
    (re.compile(r"shell\s*=\s*True|os\.system\(|os\.popen\(|subprocess\.getoutput"), "shell command", "high"),
    (re.compile(r"pickle\.loads?\(|marshal\.loads?\(|yaml\.load\((?![^)]*Loader=yaml\.Safe)"), "unsafe deserialisation", "high"),
    (re.compile(r"hashlib\.(?:md5|sha1)\(|\bMD5\b|\bSHA1\b|createHash\(['\"](?:md5|sha1)"), "weak hash", "high"),
    (re.compile(r"verify\s*=\s*False|CERT_NONE|check_hostname\s*=\s*False|InsecureSkipVerify"), "TLS verification off", "high"),
    (re.compile(r"(?i)\b(?:password|passwd|secret|api_?key|token)\w*\s*=\s*['\"][^'\"]{4,}['\"]"), "hard-coded secret", "high"),
    (re.compile(r"execute\(\s*f['\"]|execute\([^)]*%\s*\(|(?i:select|insert|update|delete)\b.*['\"]\s*\+\s*\w"), "SQL built from strings", "high"),
    (re.compile(r"^\s*except\s*(?:Exception|BaseException)?\s*(?:as\s+\w+)?\s*:\s*(?:pass)?\s*$"), "broad exception handler", "medium"),
    (re.compile(r"\[\s*:\s*\d+\s*\]|\[\s*:\s*[A-Z_]{3,}\s*\]"), "silent truncation", "medium"),
    (re.compile(r"\bmin\([^()]*,\s*[A-Z][A-Z0-9_]+\s*\)|\bmax\(\s*\d+\s*,\s*min\("), "clamped value", "low"),
    (re.compile(r"(?:capacity|limit|max_\w+|timeout|retries|period)\s*=\s*\d"), "hard-coded limit", "low"),
    (re.compile(r"tempfile\.mktemp\(|chmod\([^)]*0o?777|\b0\.0\.0\.0\b"), "unsafe file or bind", "medium"),
    (re.compile(r"\b(?:TODO|FIXME|XXX|HACK)\b"), "marked unfinished", "low"),
    (re.compile(r"\brandom\.(?:random|randint|choice)\(.*(?i:token|secret|password|salt|key)"), "predictable randomness", "high"),
]

_TESTS = [
    (re.compile(r"^\s*(?:async\s+)?def\s+test\w*\("), "test"),
    (re.compile(r"^\s*(?:it|test|describe)\s*\(\s*['\"]"), "test"),
    (re.compile(r"^\s*func\s+Test\w+\("), "test"),
    (re.compile(r"^\s*assert\b|\bassert\w*\(|expect\(|pytest\.raises\("), "assertion"),
]


def lens_candidates(corpus: RepoCorpus, module: Module, lens: str) -> list[Candidate]:
    """Lines of one module that code selects for a lens (in file order, capped)."""
    out: list[Candidate] = []
    for f in module.files:
        if is_doc_file(f.path):
            continue
        test = is_test_file(f.path)
        if (lens == "tests") != test:
            continue
        lines = corpus.lines(f.path)
        docs = corpus.doc_lines(f.path) if lens != "risks" else set()
        for i, s in enumerate(lines, 1):
            if not s.strip() or i in docs:
                continue
            if lens == "structure":
                for rx, why in _STRUCTURE:
                    if rx.search(s):
                        out.append(Candidate(f.path, i, s, why))
                        break
            elif lens == "risks":
                for rx, why, sev in _RISKS:
                    if rx.search(s):
                        out.append(Candidate(f.path, i, s, why, sev))
                        break
            else:
                for rx, why in _TESTS:
                    if rx.search(s):
                        out.append(Candidate(f.path, i, s, why))
                        break
            if len(out) >= MAX_CANDIDATES_PER_MODULE:
                return out
    return out


def tested_by(corpus: RepoCorpus, modules: list[Module]) -> dict[str, list[str]]:
    """Code's view of tests: the test files whose import lines name a module or its files."""
    tests = [f.path for f in corpus.files if is_test_file(f.path)]
    imports: dict[str, str] = {}
    for t in tests:
        lines = corpus.lines(t)
        imports[t] = "\n".join(s for s in lines if re.match(
            r"\s*(?:from\s+\S+\s+import|import\s|const\s.*require\(|use\s|#include)", s))
    out: dict[str, list[str]] = {}
    for m in modules:
        if all(is_test_file(f.path) or is_doc_file(f.path) for f in m.files):
            continue
        names = set()
        if not m.name.startswith("("):
            names.add(m.name.replace("/", "."))
        for f in m.files:
            stem = f.path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
            if len(stem) >= 4 and stem not in ("__init__", "index", "main", "utils", "setup"):
                names.add(stem)
        hits = []
        for t, text in imports.items():
            if any(re.search(rf"(?<![\w]){re.escape(n)}(?![\w])", text) for n in names):
                hits.append(t)
        out[m.name] = hits
    return out


# ------------------------------------------------------------------------------ jobs


@dataclass
class Job:
    id: str
    kind: str  # module | pick | recheck
    module: str
    lens: str = "structure"
    chunk: RepoChunk | None = None
    cands: list[Candidate] = field(default_factory=list)
    mapping: dict = field(default_factory=dict)
    material: str = ""
    fields: dict = field(default_factory=dict)
    task: str = "module"
    origin: dict | None = None  # recheck: the rejected claim

    def est_prompt_tokens(self) -> int:
        return est_tokens(len(self.material)) + 500


@dataclass
class Rejected:
    kind: str
    module: str
    claim: str
    cited: str
    quote: str
    reason: str
    paths: list[str]
    round: int
    severity: str | None = None
    lens: str = "structure"
    rechecked: bool = False


class _Audit:
    def __init__(self, corpus: RepoCorpus, opts: AuditOptions, model: Model, budget: Budget,
                 emit: Callable[[str, dict], None]):
        self.c, self.opts, self.model, self.budget = corpus, opts, model, budget
        self.emit = to_sink(emit)  # typed events to the (kind, data) sinks
        self.modules = group_modules(corpus.files, max_files=opts.module_max_files)
        self.module_of = {f.path: m.name for m in self.modules for f in m.files}
        self.max_chars = window_chars(model, opts.usable_fraction, opts.chunk_chars)
        self.brief = is_weak_model(model) if opts.weak_model is None else bool(opts.weak_model)
        self.stats = EvidenceStats()
        self.findings: list[AuditFinding] = []
        self.rejected: list[Rejected] = []
        self.read = ReadTracker()
        self.parts_needed: dict[str, list[tuple[int, int]]] = {}
        # parts of the module map not read: one entry per file (path, line range) of the call
        self.failed_chunks: dict[str, list[FailedChunk]] = {}
        self.other_failed: list[FailedChunk] = []  # lens, recheck and one-file calls that failed
        self.retried: set[str] = set()
        self.lenses_run: set[str] = set()
        self.dug: set[str] = set()
        self.rounds: list[RoundInfo] = []
        self.purpose: dict[str, list[str]] = {}
        self.apis: dict[str, list[str]] = {}
        self.chunks_of: dict[str, int] = {}
        self.chunks_total = self.chunks_ok = 0
        self.calls_failed = 0
        self.budget_hit = False
        self.declared: list[str] = []
        self.dropped_purposes = 0
        self.dropped_picks = 0
        self.n = 0
        self._job_n = 0

    # -- planning ------------------------------------------------------------------------------
    def _job_id(self, prefix: str) -> str:
        self._job_n += 1
        return f"{prefix}{self._job_n:04d}"

    def module_job(self, ch: RepoChunk, where: str | None = None) -> Job:
        task = "module_brief" if self.brief else "module"
        return Job(ch.id, "module", ch.module, chunk=ch, material=ch.text, task=task,
                   fields={"module": ch.module, "where": where or ch.describe(),
                           "lenses": ", ".join(self.opts.lenses), "material": ch.text})

    def round1(self) -> list[Job]:
        chunks = chunk_modules(self.c.root, self.modules, self.max_chars, lines_of=self.c.lines)
        jobs = []
        for ch in chunks:
            ch.id = self._job_id("c")
            for p in ch.parts:
                self.parts_needed.setdefault(p.path, []).append((p.start, p.end))
            self.chunks_of[ch.module] = self.chunks_of.get(ch.module, 0) + 1
            jobs.append(self.module_job(ch))
        cut = sum(ch.cut_lines for ch in chunks)
        if cut:
            self.declared.append(f"{cut} over-long lines were shown cut at {MAX_LINE_CHARS} characters")
        return jobs

    def lens_jobs(self, lens: str) -> list[Job]:
        task = {"structure": "pick_structure", "risks": "pick_risks", "tests": "pick_tests"}[lens]
        jobs = []
        for m in self.modules:
            cands = lens_candidates(self.c, m, lens)
            if self.brief:  # code's rules select; the model phrases, a few lines per call
                for group in pack_candidates(cands, self.max_chars, PHRASE_LINES_PER_CALL):
                    text, mapping = render_candidates(group)
                    jobs.append(Job(self._job_id("p"), "phrase", m.name, lens=lens, cands=group,
                                    mapping=mapping, material=text, task="phrase",
                                    fields={"module": m.name, "material": text}))
                continue
            for group in pack_candidates(cands, self.max_chars, MAX_CANDIDATES_PER_CALL):
                text, mapping = render_candidates(group)
                whys = sorted({c.why for c in group})
                jobs.append(Job(self._job_id("p"), "pick", m.name, lens=lens, cands=group,
                                mapping=mapping, material=text, task=task,
                                fields={"module": m.name, "why": ", ".join(whys), "material": text}))
        return jobs

    def phrased(self, job: Job, res, rnd: int) -> None:
        """Weak-model lens calls: every candidate line becomes a finding (code's rule selected
        it; code quotes it); its claim is the model's when that mentions the line's words."""
        given = {}
        for c in (getattr(res, "claims", None) or []):
            given.setdefault(c.n, c.claim)
        kind = {"risks": "risk", "tests": "fact", "structure": "fact"}[job.lens]
        for n, cand in job.mapping.items():
            c, ev = check_pick(self.c, job.mapping, n)
            self.stats.add(ev)
            if not ev.ok:
                continue
            claim = given.get(n, "")
            if res is not None and _sane_claim(claim, cand.text):
                note = f"selected by code ({cand.why}); claim phrased by the model"
            else:
                claim = f"{cand.why}: {' '.join(cand.text.split())[:100]}"
                note = f"selected by code ({cand.why}); claim written by code" + (
                    "" if res is not None else " (the model call failed)")
            self._add(self._finding(ev, kind, job.module, claim, cand.text.strip(), rnd,
                                    job.lens, job.id, cand.severity, note))

    def file_pick_jobs(self, module: str, path: str) -> list[Job]:
        """One file's code lines (no blank, comment or docstring lines) as candidates."""
        docs = self.c.doc_lines(path)
        cands = [Candidate(path, i, s, "code line") for i, s in enumerate(self.c.lines(path), 1)
                 if s.strip() and i not in docs]
        jobs = []
        for group in pack_candidates(cands, self.max_chars // 2, MAX_CANDIDATES_PER_CALL):
            text, mapping = render_candidates(group)
            jobs.append(Job(self._job_id("f"), "pick", module, lens="structure", cands=group,
                            mapping=mapping, material=text, task="pick_structure",
                            fields={"module": module, "why": f"the code lines of {path}",
                                    "material": text}))
        return jobs

    def recheck_job(self, r: Rejected) -> Job | None:
        claim_words = set(words(r.claim + " " + r.quote, 4))
        try:
            path, a, b = parse_evidence_path(r.cited)
        except ValueError:
            path, a, b = "", 0, 0
        paths = [path] if path in r.paths else list(r.paths)
        cands: list[tuple[int, Candidate]] = []
        for p in paths:
            lines = self.c.lines(p)
            for i, s in enumerate(lines, 1):
                if not s.strip():
                    continue
                score = len(claim_words & set(words(s, 4)))
                near = p == path and a - 3 <= i <= b + 3
                if score or near:
                    cands.append((score * 2 + (3 if near else 0), Candidate(p, i, s, "shares words")))
        if not cands or not any(score >= 2 for score, _ in cands):
            return None  # no line shares a word with the claim: nothing to ask about
        best = sorted(cands, key=lambda x: (-x[0], x[1].path, x[1].line))[:16]
        group = sorted((c for _, c in best), key=lambda c: (c.path, c.line))
        text, mapping = render_candidates(group)
        return Job(self._job_id("r"), "recheck", r.module, lens=r.lens, cands=group,
                   mapping=mapping, material=text, task="recheck", origin={"rej": r},
                   fields={"claim": r.claim[:200], "material": text})

    def plan(self, rnd: int) -> tuple[list[Job], list[str]]:
        jobs: list[Job] = []
        work: list[str] = []
        # files never read: their round-1 calls failed (not for the budget) — once more
        retry = [fcs[0] for cid, fcs in self.failed_chunks.items()
                 if cid not in self.retried and fcs[0].status == Status.FAILED.value]
        for fc in retry:
            self.retried.add(fc.chunk)
            ch = self._chunk_by_id.get(fc.chunk)
            if ch is not None:
                j = self.module_job(ch)
                j.id = self._job_id("c")
                self._chunk_by_id[j.id] = ch
                j.origin = {"retry_of": fc.chunk}
                jobs.append(j)
        if retry:
            work.append(f"re-read {len(retry)} part(s) whose call failed")
        # lenses not yet run
        for lens in self.opts.lenses:
            if lens not in self.lenses_run:
                self.lenses_run.add(lens)
                lj = self.lens_jobs(lens)
                jobs.extend(lj)
                work.append(f"lens {lens}: {sum(len(j.cands) for j in lj)} candidate lines "
                            f"in {len(lj)} call(s)")
        # claims whose evidence failed
        rc = []
        asked: set[str] = set()
        cap = max(MAX_RECHECKS_PER_ROUND, len(self.modules))
        for r in self.rejected:
            if r.rechecked or len(rc) >= cap:
                continue
            r.rechecked = True
            norm = " ".join(r.claim.lower().split())
            if norm in asked:
                continue
            asked.add(norm)
            j = self.recheck_job(r)
            if j is not None:
                rc.append(j)
        if rc:
            jobs.extend(rc)
            work.append(f"recheck {len(rc)} claim(s) whose evidence was rejected")
        # modules still without findings, once the lenses have run: one file per call
        if rnd >= 3 or not self.opts.lenses:
            has = {f.module for f in self.findings}
            thin = [m for m in self.modules if m.name not in has and m.name not in self.dug]
            n_thin = 0
            for m in thin:
                self.dug.add(m.name)
                files = [f for f in m.files if self.c.lines(f.path)]
                if not files:
                    continue
                n_thin += 1
                for f in files:
                    if self.brief:  # a weak model picks among all the file's code lines
                        jobs.extend(self.file_pick_jobs(m.name, f.path))
                        continue
                    for ch in chunk_files(self.c.root, m.name, [f], max(800, self.max_chars // 2),
                                          lines_of=self.c.lines):
                        ch.id = self._job_id("f")
                        self._chunk_by_id[ch.id] = ch
                        jobs.append(self.module_job(ch, f"one file: {ch.describe()}"))
            if n_thin:
                work.append(f"dig {n_thin} module(s) without findings, one file per call")
        return jobs, work

    # -- checking ------------------------------------------------------------------------------
    def _resolve_cited(self, ch: RepoChunk, ep: str) -> str:
        """Lenient reading of what a model wrote, never of what the file says: a bare line
        range in a one-file chunk, or a path written without its folders that names exactly
        one file of the chunk, is completed to that file's path."""
        raw = ep.strip().strip("`").strip()
        paths = ch.paths
        if re.fullmatch(r"L?\d+(?:\s*[-–]\s*L?\d+)?", raw) and len(paths) == 1:
            return f"{paths[0]}:{raw}"
        try:
            p, a, b = parse_evidence_path(raw)
        except ValueError:
            return raw
        p = p.strip().lstrip("./") if p.startswith("./") else p.strip()
        if p not in paths:
            same = [x for x in paths if x.endswith("/" + p) or x.rsplit("/", 1)[-1] == p]
            if len(same) == 1:
                return format_evidence_path(same[0], a, b)
        return format_evidence_path(p, a, b)

    def _add(self, f: AuditFinding) -> bool:
        """Keep a checked finding unless one of the same kind already covers an overlapping
        range of the same file (the seen-set). Returns True when it is new."""
        s = f.source
        for g in self.findings:
            if (g.kind == f.kind and g.source.path == s.path and g.source.line_start <= s.line_end
                    and s.line_start <= g.source.line_end):
                return False
        self.n += 1
        f.id = f"f{self.n}"
        self.findings.append(f)
        return True

    def _finding(self, ev: EvidenceCheck, kind: str, module: str, claim: str, quote: str,
                 rnd: int, lens: str, chunk: str, severity: str | None = None,
                 note: str | None = None) -> AuditFinding:
        basis = self.c.basis(ev.path, ev.line_start, ev.line_end)
        if is_doc_file(ev.path) or (kind == "fact" and basis == "docs"):
            kind = "doc"
        return AuditFinding(
            id="", claim=claim.strip() or "(no claim given)", evidence=ev.text,
            source=Source(path=ev.path, line_start=ev.line_start, line_end=ev.line_end),
            verified=kind != "doc", chunk=chunk, label=kind, group=module,
            note=note or (ev.reason or None) if kind != "doc" else
            "quoted from documentation or comments: the text is there, the behaviour is not "
            "checked against code",
            kind=kind, module=module, severity=severity if kind == "risk" else None, lens=lens,
            round=rnd, evidence_path=ev.evidence_path, quote=quote[:200], status=ev.status)

    def cited(self, job: Job, item, kind: str, rnd: int) -> bool:
        ch = job.chunk
        ep = self._resolve_cited(ch, item.evidence_path)
        ev = evidence.check(self.c.root, ep, item.quote)
        if ev.ok:
            shown = ch.shows(ev.path, ev.line_start, ev.line_end, slack=5)
            if not shown:
                ev = EvidenceCheck("rejected", ev.path, ev.line_start, ev.line_end, "",
                                   f"{ev.evidence_path} was not shown to this call "
                                   f"(it was shown {', '.join(p.ref() for p in ch.parts[:4])})")
        self.stats.add(ev)
        sev = getattr(item, "severity", None)
        if not ev.ok:
            self.rejected.append(Rejected(kind, job.module, item.claim, item.evidence_path,
                                          item.quote, ev.reason, ch.paths, rnd, sev, job.lens))
            return False
        return self._add(self._finding(ev, kind, job.module, item.claim, item.quote, rnd,
                                       "structure" if kind == "fact" else "risks", job.id, sev))

    def picked(self, job: Job, pick, rnd: int) -> bool:
        cand, ev = check_pick(self.c, job.mapping, pick.n, getattr(pick, "quote", ""))
        self.stats.add(ev)
        origin = (job.origin or {}).get("rej")
        if job.kind == "recheck":
            kind = origin.kind
        else:
            kind = {"risks": "risk", "tests": "fact", "structure": "fact"}[job.lens]
        if self.brief and ev.ok and cand is not None and not _sane_claim(pick.claim, cand.text):
            self.dropped_picks += 1  # a weak model's pick whose claim is not about its line
            return False
        if not ev.ok or cand is None:
            if job.kind != "recheck":  # a failed recheck is not rechecked again
                self.rejected.append(Rejected(kind, job.module, pick.claim, ev.path if cand is None
                                              else ev.evidence_path, getattr(pick, "quote", ""),
                                              ev.reason, [c.path for c in job.cands][:1] or [],
                                              rnd, getattr(pick, "severity", None), job.lens,
                                              rechecked=True))
            return False
        sev = getattr(pick, "severity", None) or cand.severity if kind == "risk" else None
        if kind == "risk" and origin is not None:
            sev = origin.severity or cand.severity
        note = None
        if job.kind == "recheck":
            note = f"re-found after the citation {origin.cited} was rejected ({origin.reason})"
        quote = self.c.lines(cand.path)[cand.line - 1].strip() if cand.line else ""
        return self._add(self._finding(ev, kind, job.module, pick.claim, quote, rnd, job.lens,
                                       job.id, sev, note))

    # -- running -------------------------------------------------------------------------------
    async def run_round(self, rnd: int, jobs: list[Job], scope) -> RoundInfo:
        info = RoundInfo(round=rnd, calls=0)
        before = len(self.findings)
        self.emit(Plan(len(jobs), self.opts.concurrency))

        async def work(j: Job):
            return await call_task(self.model, RECIPE, j.task, self.budget, self.opts.timeout,
                                   **j.fields)

        def done(o: Outcome) -> None:
            j: Job = o.item
            self.chunks_total += 1
            if not o.ok:
                self.calls_failed += 1
                info.failed += 1
                if not o.status.ran_and_failed:  # the budget or Ctrl-C kept it from running
                    self.budget_hit = True
                reason = o.error or "failed"
                fcs = ledger.failed_parts(j.id, self._parts(j), o.status, reason)
                if j.kind == "module" and j.id.startswith("c"):  # a part of the module map
                    retry_of = (j.origin or {}).get("retry_of")
                    if retry_of:
                        self.failed_chunks.pop(retry_of, None)
                        self.retried.add(j.id)
                    self.failed_chunks[j.id] = fcs
                    self._chunk_by_id.setdefault(j.id, j.chunk)
                else:  # an extra dig (lens, recheck, one-file re-read): the files were read
                    self.other_failed.extend(fcs)
                    if j.kind == "phrase" and o.status.ran_and_failed:
                        self.phrased(j, None, rnd)
                self._done(j, o)
                return
            self.chunks_ok += 1
            res = o.result
            if j.kind == "module":
                ch = j.chunk
                for p in ch.parts:
                    self.read.add(p.path, p.start, p.end)
                if (j.origin or {}).get("retry_of"):
                    self.failed_chunks.pop(j.origin["retry_of"], None)
                purpose = " ".join(res.purpose.split())
                if purpose and _repetitive(purpose):
                    self.dropped_purposes += 1
                elif purpose:
                    self.purpose.setdefault(j.module, []).append(purpose)
                self.apis.setdefault(j.module, []).extend(a.strip() for a in res.key_apis if a.strip())
                for fct in getattr(res, "facts", []):
                    self.cited(j, fct, "fact", rnd)
                for r in getattr(res, "risks", []):
                    self.cited(j, r, "risk", rnd)
            elif j.kind == "phrase":
                for c in j.cands:
                    self.read.add(c.path, c.line, c.line)
                self.phrased(j, res, rnd)
            else:
                for c in j.cands:
                    self.read.add(c.path, c.line, c.line)
                for pk in res.picks:
                    self.picked(j, pk, rnd)
            self._done(j, o)

        await map_items(jobs, work, key=lambda j: j.id, concurrency=self.opts.concurrency,
                        budget=self.budget, on_outcome=done, cancel_scope=scope)
        info.new = len(self.findings) - before
        return info

    def _parts(self, j: Job) -> list[tuple[str, int, int]]:
        """The files and line ranges a job showed the model."""
        if j.chunk is not None:
            return [(p.path, p.start, p.end) for p in j.chunk.parts]
        return ledger.ranges_of((c.path, c.line) for c in j.cands)

    def _done(self, j: Job, o: Outcome) -> None:
        u = self.budget.usage
        self.emit(UnitDone.of(ledger.unit_of(j.id, self._parts(j)), o.status, o.reason, u))

    async def execute(self, scope) -> None:
        self._chunk_by_id: dict[str, RepoChunk] = {}
        jobs = self.round1()
        for j in jobs:
            self._chunk_by_id[j.id] = j.chunk
        self.first_jobs = jobs
        lens_est = sum(len(self.lens_jobs(lens)) for lens in self.opts.lenses)
        self._job_n -= lens_est  # ids used only for the estimate
        self.estimate = Estimate(
            calls=len(jobs) + lens_est,
            prompt_tokens=sum(j.est_prompt_tokens() for j in jobs) + lens_est * 900)
        if self.opts.dry_run:
            self.stopped, self.stop_reason = "dry_run", "dry run: no model call was made"
            return
        streak = 0
        self.stopped, self.stop_reason = "max_rounds", f"stopped after max_rounds={self.opts.max_rounds}"
        for rnd in range(1, max(1, self.opts.max_rounds) + 1):
            if rnd == 1:
                work = [f"module map: {len(jobs)} call(s) over {len(self.modules)} module(s)"]
            else:
                jobs, work = self.plan(rnd)
                if not jobs:
                    self.stopped = "nothing_left"
                    self.stop_reason = (f"after round {rnd - 1} nothing was left to dig: every lens "
                                        "ran, every rejected claim was rechecked, every module "
                                        "has findings or was read file by file")
                    break
            why = self.budget.exhausted()
            if why:
                self.stopped, self.stop_reason = "budget", f"before round {rnd}: {why}"
                self.budget_hit = True
                break
            info = await self.run_round(rnd, jobs, scope)
            info.work = work
            info.calls = len(jobs)
            self.rounds.append(info)
            if self.budget_hit or self.budget.interrupted:
                self.stopped = "budget"
                self.stop_reason = (f"round {rnd}: " + (self.budget.exhausted() or "budget spent")
                                    + "; calls that did not run are reported as failed")
                break
            streak = streak + 1 if info.new == 0 else 0
            if streak >= 2:
                self.stopped = "no_progress"
                self.stop_reason = (f"rounds {rnd - 1} and {rnd} added nothing new "
                                    "(compared by code against the seen-set)")
                break

    # -- report --------------------------------------------------------------------------------
    def module_infos(self) -> list[ModuleInfo]:
        tb = tested_by(self.c, self.modules)
        counts: dict[str, int] = {}
        for f in self.findings:
            counts[f.module] = counts.get(f.module, 0) + 1
        out = []
        for m in self.modules:
            text = "\n".join("\n".join(self.c.lines(f.path)) for f in m.files)
            apis = []
            for a in dict.fromkeys(self.apis.get(m.name, [])):
                name = a.split("(")[0].strip().split(".")[-1]
                if name and re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", text) and name not in apis:
                    apis.append(name)
            ps = self.purpose.get(m.name, [])
            purpose = ps[0][:300] if ps else ""
            if len(ps) > 1:
                purpose += f" (+{len(ps) - 1} more part(s))"
            out.append(ModuleInfo(name=m.name, files=len(m.files), lines=m.lines, bytes=m.size,
                                  purpose=purpose, key_apis=apis[:10], tested_by=tb.get(m.name, []),
                                  chunks=self.chunks_of.get(m.name, 0),
                                  findings=counts.get(m.name, 0)))
        return out

    def report(self, t0: float, run_id: str) -> AuditReport:
        c = self.c
        if self.dropped_purposes:
            self.declared.append(f"{self.dropped_purposes} module purpose(s) written by the model "
                                 "were dropped as degenerate (one word repeated)")
        if self.dropped_picks:
            self.declared.append(f"{self.dropped_picks} line(s) picked by the weak model were "
                                 "dropped: their claims did not mention the picked line")
        read_files = {f.path for f in c.files if self.read.covers(f.path, len(c.lines(f.path)))
                      and f.path in self.parts_needed}
        failed_files = set()
        for cid in self.failed_chunks:
            ch = self._chunk_by_id.get(cid)
            if ch is not None:
                failed_files.update(p.path for p in ch.parts)
        failed_files -= read_files
        if self.opts.dry_run:
            failed_files = set()
        fcov = c.file_coverage(read_files, failed_files)
        cov = Coverage(
            chunks_total=self.chunks_total, chunks_ok=self.chunks_ok,
            chunks_failed=[fc for fcs in self.failed_chunks.values() for fc in fcs]
            + self.other_failed,
            bytes_total=c.walk.total_bytes,
            lines_total=c.walk.total_lines, skipped=fcov.skipped_files, declared=list(self.declared))
        cov.lines_read_by_model = self.read.total_lines()
        cov.bytes_read_by_model = self.read.total_bytes(c)
        cov.bytes_scanned_by_code = c.walk.total_bytes  # every kept file is scanned for candidates
        cov.lines_scanned_by_code = c.walk.total_lines
        if not self.opts.dry_run:
            if fcov.scanned_by_code:  # an audit reads every file; mine needs only what it scoped
                cov.gaps.append(f"{fcov.scanned_by_code} file(s) were only scanned by code, "
                                "never read by the model")
            if self.stopped == "budget":
                cov.gaps.append(f"the rounds stopped early ({self.stop_reason})")
        cov.interrupted = self.budget.interrupted
        u = self.budget.usage
        body = [files_statement(fcov),
                f"The model read {cov.lines_read_by_model:,} of {c.walk.total_lines:,} lines in "
                f"{self.chunks_ok} of {self.chunks_total} calls; code scanned every kept file for "
                "candidate lines."]
        if self.other_failed:
            body.append(f"{len({x.chunk for x in self.other_failed})} of the failed calls were digging calls: their "
                        "files had been read in the module map.")
        ledger.close(cov, body, what="the audit", dry_run=self.opts.dry_run)

        info = AuditInfo(lenses=list(self.opts.lenses), modules=self.module_infos(),
                         rounds=self.rounds, stopped=self.stopped, stop_reason=self.stop_reason,
                         evidence=EvidenceCounts(**self.stats.as_dict()))
        rejected = []
        for i, r in enumerate(self.rejected, 1):
            try:
                p, a, b = parse_evidence_path(r.cited)
            except ValueError:
                p, a, b = r.cited[:200], 0, 0
            rejected.append(AuditFinding(
                id=f"x{i}", claim=r.claim or "(no claim)", evidence="",
                source=Source(path=p, line_start=a, line_end=b), verified=False, label=r.kind,
                group=r.module, note=r.reason, kind=r.kind if r.kind != "doc" else "fact",
                module=r.module, severity=r.severity, lens=r.lens, round=r.round,
                evidence_path=r.cited[:200], quote=r.quote[:200], status="rejected"))
        nf = sum(f.kind == "fact" for f in self.findings)
        nr = sum(f.kind == "risk" for f in self.findings)
        nd = sum(f.kind == "doc" for f in self.findings)
        reasons = [
            f"repository: {fcov.total} files listed by the walker ({c.walk.method}), "
            f"{len(c.files)} kept, grouped by folder into {len(self.modules)} module(s)",
            f"round 1: one isolated call per module or module part ({len(self.first_jobs)} "
            f"call(s) of at most {self.max_chars:,} characters; big files cut on function "
            "or class boundaries)",
            f"later rounds dig where the map is thin; lenses: {', '.join(self.opts.lenses)}",
        ]
        if self.brief:
            reasons.append("weak model (the embedded one): round 1 asks only what each module is "
                           "for; in the lens rounds the lines code's rules select are the "
                           "findings (code quotes them) and the model only phrases their claims")
        rep = AuditReport(
            command="audit", question=f"repository audit ({', '.join(self.opts.lenses)})",
            corpus=c.corpus_info(), strategy="fanout",
            gate=GateInfo(reasons=reasons, estimate=self.estimate),
            answer=(f"{nf} verified fact(s), {nr} verified risk(s) and {nd} documentation "
                    f"claim(s) in {len(self.modules)} module(s) after {len(self.rounds)} round(s); "
                    f"stopped: {self.stopped} ({self.stop_reason}). Evidence: "
                    f"{self.stats.verified} verified, {self.stats.corrected} corrected, "
                    f"{self.stats.rejected} rejected."),
            findings=self.findings + rejected, coverage=cov, audit=info, files=fcov,
            evidence=info.evidence,
            usage=UsageInfo(calls=u.calls, prompt_tokens=u.prompt_tokens,
                            completion_tokens=u.completion_tokens, cached_calls=u.cached_calls,
                            wall_s=round(time.monotonic() - t0, 3)),
            model=getattr(self.model, "name", ""), run_id=run_id, dry_run=self.opts.dry_run)
        rep.reduce.rounds = len(self.rounds)
        rep.reduce.stopped = "budget" if self.stopped == "budget" else (
            "no_progress" if self.stopped == "no_progress" else "fits")
        rep.reduce.log = [f"round {r.round}: {'; '.join(r.work)} — {r.calls} call(s), "
                          f"{r.failed} failed, {r.new} new" for r in self.rounds]
        return rep


# ------------------------------------------------------------------------------ entry points


async def audit_async(repo: str, opts: AuditOptions | None = None, model: Model | None = None,
                      on_event: Callable[[str, dict], None] | None = None,
                      handle_sigint: bool = False) -> AuditReport:
    opts = opts or AuditOptions()
    t0 = time.monotonic()
    corpus = RepoCorpus(repo)
    budget = Budget(opts.max_tokens, opts.max_calls, opts.max_wall_s)
    emit = on_event or (lambda e, d: None)
    run_id = new_run_id()

    async def go(m: Model, scope, b: Budget) -> AuditReport:
        run = _Audit(corpus, opts, m, b, emit)
        await run.execute(scope)
        return run.report(t0, run_id)

    return await with_model(opts, go, model, handle_sigint, budget)


def audit(repo: str, opts: AuditOptions | None = None, **kw) -> AuditReport:
    """Synchronous wrapper around :func:`audit_async`."""
    return anyio.run(lambda: audit_async(repo, opts, **kw))


# ------------------------------------------------------------------------------ Markdown


def _link(base: str, path: str, a: int, b: int) -> str:
    ref = format_evidence_path(path, a, b)
    target = (base.rstrip("/") + "/" if base else "") + path + f"#L{a}" + (f"-L{b}" if b != a else "")
    return f"[`{ref}`]({target.replace(' ', '%20')})"


def _q(text: str, width: int = 140) -> str:
    t = " ".join(text.split("\n")[0].split()).replace("`", "'").replace("|", "\\|")
    return t if len(t) <= width else t[:width] + "…"


def _cell(text: str, width: int = 160) -> str:
    t = " ".join(text.split()).replace("|", "\\|")
    return t if len(t) <= width else t[:width] + "…"


def audit_markdown(rep: AuditReport, link_base: str = "") -> str:
    a = rep.audit
    fc = rep.files
    out: list[str] = [f"# rlm audit: `{rep.corpus.path}`"]
    out.append(f"{rep.corpus.files} files kept ({rep.corpus.bytes:,} bytes, {rep.corpus.lines:,} "
               f"lines) in {len(a.modules)} module(s). Lenses: {', '.join(a.lenses)}. "
               f"Model: {rep.model or '-'}.")
    if rep.dry_run:
        out.append(f"**Dry run**: no model call was made. Estimate: {rep.gate.estimate.calls} "
                   f"call(s) for round 1 and the lens passes, ~{rep.gate.estimate.prompt_tokens:,} "
                   "prompt tokens.")
    else:
        out.append(f"**Rounds: {len(a.rounds)}; stopped: {a.stopped}** — {a.stop_reason}.")
        ev = a.evidence
        out.append(f"Evidence checked by code: {ev.verified} verified, {ev.corrected} corrected "
                   f"(the quote was a few lines from the cited range), {ev.rejected} rejected.")
    out.append("## Module map")
    table = ["| Module | Files | Lines | Purpose (model) | Key APIs (found in the code) | "
             "Tests importing it | Findings |", "|---|---:|---:|---|---|---|---:|"]
    for m in a.modules:
        tests = ", ".join(f"`{t}`" for t in m.tested_by[:3]) + (
            f" +{len(m.tested_by) - 3}" if len(m.tested_by) > 3 else "")
        tests = tests or ("—" if m.name not in ("tests", "test") else "")
        table.append(f"| `{m.name}` | {m.files} | {m.lines:,} | {_cell(m.purpose) or '—'} | "
                     f"{', '.join(f'`{x}`' for x in m.key_apis) or '—'} | {tests} | {m.findings} |")
    out.append("\n".join(table))
    verified = [f for f in rep.findings if f.status != "rejected"]
    out.append("## Findings by module")
    if not verified:
        out.append("_No finding could be verified._")
    for m in a.modules:
        fs = [f for f in verified if f.module == m.name]
        if not fs:
            continue
        out.append(f"### `{m.name}`")
        block = []
        for f in sorted(fs, key=lambda f: (f.kind == "doc", f.kind, f.source.path, f.source.line_start)):
            s = f.source
            tag = {"fact": "fact", "risk": f"risk · {f.severity or 'medium'}",
                   "doc": "docs say (not checked against code)"}[f.kind]
            extra = f" _({f.note})_" if f.note and f.status == "corrected" else ""
            block.append(f"- **{tag}** {_cell(f.claim, 240)} — "
                         f"{_link(link_base, s.path, s.line_start, s.line_end)} `{_q(f.evidence)}`{extra}")
        out.append("\n".join(block))
    risks = sorted((f for f in verified if f.kind == "risk"),
                   key=lambda f: (SEVERITY_RANK.get(f.severity, 3), f.source.path, f.source.line_start))
    out.append("## Risks, ranked")
    if risks:
        block = []
        for i, f in enumerate(risks, 1):
            s = f.source
            block.append(f"{i}. **{f.severity or 'medium'}** {_cell(f.claim, 240)} — "
                         f"{_link(link_base, s.path, s.line_start, s.line_end)} `{_q(f.evidence)}`")
        out.append("\n".join(block))
    else:
        out.append("_No verified risk._")
    rejected = [f for f in rep.findings if f.status == "rejected"]
    if rejected:
        out.append(f"## Not verified ({len(rejected)}): claims whose evidence did not check out — "
                   "not facts")
        block = [f"- [{f.kind}] {_cell(f.claim, 160)} — cited `{_cell(f.evidence_path, 80)}`: "
                 f"{_cell(f.note or '', 200)}" for f in rejected[:40]]
        if len(rejected) > 40:
            block.append(f"- … and {len(rejected) - 40} more (see the JSON report)")
        out.append("\n".join(block))
    if a.rounds:
        out.append("## Rounds")
        table = ["| Round | Work (chosen by code) | Calls | Failed | New findings |",
                 "|---:|---|---:|---:|---:|"]
        for r in a.rounds:
            table.append(f"| {r.round} | {_cell('; '.join(r.work), 300)} | {r.calls} | {r.failed} "
                         f"| {r.new} |")
        out.append("\n".join(table))
    out.append("## Coverage")
    if fc.skipped_files:
        out.append("Skipped: " + "; ".join(f"`{x['path']}` ({x['reason']})"
                                           for x in fc.skipped_files[:25])
                   + (f"; and {len(fc.skipped_files) - 25} more" if len(fc.skipped_files) > 25 else "")
                   + ".")
    if fc.failed_files:
        out.append("Failed (not read): " + ", ".join(f"`{p}`" for p in fc.failed_files[:25]) + ".")
    if fc.scanned_only:
        out.append("Only scanned by code (never read by the model): "
                   + ", ".join(f"`{p}`" for p in fc.scanned_only[:25]) + ".")
    out.append(f"_{rep.coverage.statement}_")
    u = rep.usage
    if not rep.dry_run:
        out.append(f"Usage: {u.calls} call(s), {u.prompt_tokens:,} prompt + {u.completion_tokens:,} "
                   f"completion tokens, {u.wall_s:.1f}s. Run: {rep.run_id}.")
    return "\n\n".join(out) + "\n"
