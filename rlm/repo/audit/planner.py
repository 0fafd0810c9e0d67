"""Which jobs each audit round runs, chosen by code.

Round 1 is the module map. Later rounds dig where the map is thin: map parts whose call failed
(once more), lenses not yet run, claims whose evidence was rejected, and (from round 3) modules
that still have no finding, one file per call."""

from __future__ import annotations

from rlm.repo.audit.findings import Rejected
from rlm.repo.audit.jobs import Job, ModuleJob, PhraseJob, PickJob, RecheckJob
from rlm.repo.audit.lenses import lens_candidates, lenses
from rlm.repo.audit.state import AuditState
from rlm.corpus.chunk import Chunk
from rlm.corpus.lines import MAX_LINE_CHARS
from rlm.verify.evidence import parse_evidence_path
from rlm.repo.candidates import Candidate, pack_candidates, render_candidates, words
from rlm.repo.chunks import chunk_files, chunk_modules

MAX_CANDIDATES_PER_CALL = 40
MAX_RECHECKS_PER_ROUND = 12  # (at least one per module)
PHRASE_LINES_PER_CALL = 6


def module_job(st: AuditState, ch: Chunk, where: str | None = None, map_part: bool = True,
               retry_of: str | None = None) -> ModuleJob:
    task = "module_brief" if st.brief else "module"
    return ModuleJob(ch.id, ch.module, task, {"module": ch.module, "where": where or ch.describe(),
                                              "lenses": ", ".join(st.opts.lenses),
                                              "material": ch.numbered_text()},
                     chunk=ch, map_part=map_part, retry_of=retry_of)


def round1(st: AuditState) -> list[ModuleJob]:
    chunks = chunk_modules(st.corpus.root, st.modules, st.max_chars, lines_of=st.corpus.lines)
    jobs = []
    for ch in chunks:
        ch.id = st.job_id("c")
        st.map_paths.update(p.path for p in ch.parts)
        st.chunks_of[ch.module] = st.chunks_of.get(ch.module, 0) + 1
        jobs.append(module_job(st, ch))
    cut = sum(ch.cut_lines() for ch in chunks)
    if cut:
        st.declared.append(f"{cut} over-long lines were shown cut at {MAX_LINE_CHARS} characters")
    return jobs


def lens_jobs(st: AuditState, lens: str, job_id=None) -> list[Job]:
    job_id = job_id or st.job_id
    jobs: list[Job] = []
    for m in st.modules:
        cands = lens_candidates(st.corpus, m, lens)
        if st.brief:  # code's rules select; the model phrases, a few lines per call
            for group in pack_candidates(cands, st.max_chars, PHRASE_LINES_PER_CALL):
                text, mapping = render_candidates(group)
                jobs.append(PhraseJob(job_id("p"), m.name, "phrase",
                                      {"module": m.name, "material": text}, lens=lens,
                                      cands=group, mapping=mapping))
            continue
        for group in pack_candidates(cands, st.max_chars, MAX_CANDIDATES_PER_CALL):
            text, mapping = render_candidates(group)
            whys = ", ".join(sorted({c.why for c in group}))
            jobs.append(PickJob(job_id("p"), m.name, lenses()[lens].task,
                                {"module": m.name, "why": whys, "material": text}, lens=lens,
                                cands=group, mapping=mapping))
    return jobs


def file_pick_jobs(st: AuditState, module: str, path: str) -> list[Job]:
    """One file's code lines (no blank, comment or docstring lines) as candidates."""
    docs = st.corpus.doc_lines(path)
    cands = [Candidate(path, i, s, "code line") for i, s in enumerate(st.corpus.lines(path), 1)
             if s.strip() and i not in docs]
    jobs: list[Job] = []
    for group in pack_candidates(cands, st.max_chars // 2, MAX_CANDIDATES_PER_CALL):
        text, mapping = render_candidates(group)
        jobs.append(PickJob(st.job_id("f"), module, "pick_structure",
                            {"module": module, "why": f"the code lines of {path}", "material": text},
                            cands=group, mapping=mapping))
    return jobs


def recheck_job(st: AuditState, r: Rejected) -> RecheckJob | None:
    """The lines that share words with a rejected claim (or sit near its citation)."""
    claim_words = set(words(r.claim + " " + r.quote, 4))
    try:
        path, a, b = parse_evidence_path(r.cited)
    except ValueError:
        path, a, b = "", 0, 0
    scored: list[tuple[int, Candidate]] = []
    for p in ([path] if path in r.paths else list(r.paths)):
        for i, s in enumerate(st.corpus.lines(p), 1):
            if not s.strip():
                continue
            score = len(claim_words & set(words(s, 4)))
            near = p == path and a - 3 <= i <= b + 3
            if score or near:
                scored.append((score * 2 + (3 if near else 0), Candidate(p, i, s, "shares words")))
    if not any(score >= 2 for score, _ in scored):
        return None  # no line shares a word with the claim: nothing to ask about
    best = sorted(scored, key=lambda x: (-x[0], x[1].path, x[1].line))[:16]
    group = sorted((c for _, c in best), key=lambda c: (c.path, c.line))
    text, mapping = render_candidates(group)
    return RecheckJob(st.job_id("r"), r.module, "recheck", {"claim": r.claim[:200], "material": text},
                      lens=r.lens, cands=group, mapping=mapping, origin=r)


def _retries(st: AuditState) -> list[Job]:
    """Map parts whose call failed (not for the budget or Ctrl-C), read once more."""
    jobs: list[Job] = []
    for cid, fp in list(st.failed_map.items()):
        if cid in st.retried or not fp.status.ran_and_failed:
            continue
        st.retried.add(cid)
        ch = fp.job.chunk
        jobs.append(module_job(st, ch, map_part=True, retry_of=cid))
        jobs[-1].id = st.job_id("c")
    return jobs


def _rechecks(st: AuditState) -> list[Job]:
    jobs: list[Job] = []
    asked: set[str] = set()
    cap = max(MAX_RECHECKS_PER_ROUND, len(st.modules))
    for r in st.findings.rejected:
        if r.rechecked or len(jobs) >= cap:
            continue
        r.rechecked = True
        norm = " ".join(r.claim.lower().split())
        if norm in asked:
            continue
        asked.add(norm)
        j = recheck_job(st, r)
        if j is not None:
            jobs.append(j)
    return jobs


def _thin_modules(st: AuditState) -> tuple[list[Job], int]:
    """Modules still without findings: one file per call (a weak model picks code lines)."""
    has = {f.module for f in st.findings.items if f.chunk != "code"}  # code facts: not read
    jobs: list[Job] = []
    n = 0
    for m in [m for m in st.modules if m.name not in has and m.name not in st.dug]:
        st.dug.add(m.name)
        files = [f for f in m.files if st.corpus.lines(f.path)]
        n += bool(files)
        for f in files:
            if st.brief:
                jobs.extend(file_pick_jobs(st, m.name, f.path))
                continue
            for ch in chunk_files(st.corpus.root, m.name, [f], max(800, st.max_chars // 2),
                                  lines_of=st.corpus.lines):
                ch.id = st.job_id("f")
                jobs.append(module_job(st, ch, f"one file: {ch.describe()}", map_part=False))
    return jobs, n


def plan(st: AuditState, rnd: int) -> tuple[list[Job], list[str]]:
    """The jobs of a digging round (2 and later) and what they are, in words."""
    jobs: list[Job] = []
    work: list[str] = []
    retry = _retries(st)
    if retry:
        jobs.extend(retry)
        work.append(f"re-read {len(retry)} part(s) whose call failed")
    for lens in st.opts.lenses:
        if lens not in st.lenses_run:
            st.lenses_run.add(lens)
            lj = lens_jobs(st, lens)
            jobs.extend(lj)
            work.append(f"lens {lens}: {sum(len(j.cands) for j in lj)} candidate lines "
                        f"in {len(lj)} call(s)")
    rc = _rechecks(st)
    if rc:
        jobs.extend(rc)
        work.append(f"recheck {len(rc)} claim(s) whose evidence was rejected")
    if rnd >= 3 or not st.opts.lenses:
        thin, n = _thin_modules(st)
        if n:
            jobs.extend(thin)
            work.append(f"dig {n} module(s) without findings, one file per call")
    return jobs, work
