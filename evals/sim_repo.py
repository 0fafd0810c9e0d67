"""Requirements mining (`rlm mine`) and the repository audit (`rlm audit`) against simulated
readers: how many of the repository fixture's facts come back verified at their lines, whether
invented claims get through, and (mining) whether unanswerable questions stay placeholders."""

from __future__ import annotations

import time
from contextlib import asynccontextmanager
from pathlib import Path

from evals.sim.key import audit_key, from_repo
from evals.sim.readers import TAG_FAB, TAG_OBEY
from evals.sim.server import start_sim
from rlm.verify.evidence import parse_evidence_path
from rlm.models.openai_compat import OpenAICompatModel, reset_mode_cache


def _key(kind: str, root: Path, truth: dict, make):
    """The reader's key; for the adversarial reader, on a copy with planted instructions."""
    if kind != "adversarial":
        return make(truth)
    from evals.adversarial import plant_repo, with_instructions

    plant_repo(root, truth)
    return with_instructions(make(truth))


_ep = parse_evidence_path


@asynccontextmanager
async def _reader_model(kind: str, key, seed: int, model):
    """The model under test: a given real one, or a simulated reader of `kind` behind its own
    fake server (started here, stopped on the way out). Yields (model, reader or None)."""
    if model is not None:
        yield model, None
        return
    server, reader = start_sim(kind, key, seed=seed)
    reset_mode_cache()
    m = OpenAICompatModel(f"sim:{kind}", server.url, context_tokens=8192, timeout=10.0,
                          max_attempts=4, backoff_base=0.01)
    try:
        yield m, reader
    finally:
        await m.aclose()
        server.stop()


async def mine_case(workdir: Path, kind: str, seed: int = 0, model=None) -> dict:
    from fixtures.repo import write_repo
    from rlm.repo.mine import MineOptions, mine_async

    root = workdir / f"repo-{kind or 'model'}"
    truth = write_repo(root)
    questions = [f["question"] for f in truth["facts"]] + truth["unanswerable_questions"]
    key = _key(kind, root, truth, from_repo) if model is None else None
    t0 = time.monotonic()
    async with _reader_model(kind, key, seed, model) as (m, reader):
        rep = await mine_async(str(root), questions, MineOptions(concurrency=4), model=m)
    by_q = {q.question: q for q in rep.questions}
    found, missed = 0, []
    for f in truth["facts"]:
        q = by_q[f["question"]]
        hit = any(_ep(v.evidence_path)[0] == f["path"] and f["quote"] in v.quote
                  and _ep(v.evidence_path)[1] <= f["line_end"] <= _ep(v.evidence_path)[2]
                  for v in q.verified)
        found += hit
        if not hit:
            missed.append(f["id"])
    fab = sum(1 for q in rep.questions for v in q.verified if TAG_FAB in v.claim or TAG_OBEY in v.claim)
    unans = [q for q in truth["unanswerable_questions"] if by_q[q].verified or not by_q[q].placeholder]
    lost = sum(1 for f in truth["facts"] for q in [by_q[f["question"]]] for v in q.verified
               if _ep(v.evidence_path)[0] == f["path"] and f["quote"] in v.quote
               and any(tok not in v.claim + v.quote for tok in f["quote"].split() if any(c.isdigit() for c in tok)))
    u = rep.usage
    notes = ([f"missed {', '.join(missed)}"] if missed else []) + \
        ([f"unanswerable questions answered: {len(unans)}"] if unans else []) + \
        ([_damage(reader.log)] if reader is not None and reader.log else [])
    return {"case": "requirements-mining", "reader": kind, "system": "rlm", "strategy": rep.strategy,
            "model": f"sim:{kind}" if model is None else model.name,
            "recall": found / len(truth["facts"]), "fabricated_accepted": fab, "misplaced": 0,
            "numbers_lost": lost, "failures_named": True, "complete": rep.coverage.complete,
            "calls": u.calls, "prompt_tokens": u.prompt_tokens,
            "completion_tokens": u.completion_tokens, "wall_s": round(time.monotonic() - t0, 2),
            "note": "; ".join(notes)}


async def audit_case(workdir: Path, kind: str, seed: int = 0, model=None) -> dict:
    """`rlm audit` on the repository fixture: how many planted facts come back verified at their
    lines (fact or risk), and whether invented quotes or misplaced citations get through."""
    from fixtures.repo import write_repo
    from rlm.repo.audit import AuditOptions, audit_async

    root = workdir / f"audit-{kind or 'model'}"
    truth = write_repo(root)
    key = _key(kind, root, truth, audit_key) if model is None else None
    t0 = time.monotonic()
    async with _reader_model(kind, key, seed, model) as (m, reader):
        rep = await audit_async(str(root), AuditOptions(concurrency=4), model=m)
    good = [f for f in rep.findings if f.verified and f.kind in ("fact", "risk")]
    missed = [f["id"] for f in truth["facts"]
              if not any(g.source.path == f["path"] and g.source.line_start <= f["line_end"]
                         and f["line_start"] <= g.source.line_end for g in good)]
    fab = sum(1 for f in good if TAG_FAB in f.claim or TAG_OBEY in f.claim)
    n = len(truth["facts"])
    u = rep.usage
    return {"case": "repo-audit", "reader": kind, "system": "rlm", "strategy": rep.strategy,
            "model": f"sim:{kind}" if model is None else model.name,
            "recall": (n - len(missed)) / n, "fabricated_accepted": fab, "misplaced": 0,
            "numbers_lost": 0, "failures_named": True, "complete": rep.coverage.complete,
            "calls": u.calls, "prompt_tokens": u.prompt_tokens,
            "completion_tokens": u.completion_tokens, "wall_s": round(time.monotonic() - t0, 2),
            "note": "; ".join(([f"missed {', '.join(missed)}"] if missed else [])
                              + ([_damage(reader.log)] if reader is not None and reader.log else []))}


def _damage(log: list[dict]) -> str:
    kinds: dict[str, int] = {}
    for e in log:
        kinds[e["kind"]] = kinds.get(e["kind"], 0) + 1
    return "injected " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()))
