"""rlm against simulated readers on every fixture path: what the orchestrator keeps of what a
perfect reader finds, and what it lets through of what a bad one invents.

    python -m evals.run --suite sim [--quick]

Cases: log-anomalies (profile path), log-needle (grep), notes (direct), transcript-story and
transcript-revised (fan-out), repository audit and requirements mining (evals/sim_repo.py);
the S-NIAH and OOLONG style suites are in evals/suites.py.
Readers: oracle, noisy (seeded damage), adversarial (on a copy with planted instructions).
Baselines on the oracle: naive fan-out (no gate) and truncated direct read.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from evals.harness import RunResult, run_naive, run_rlm, run_truncated
from evals.suites import embedded, progress
from evals.sim.key import QuestionKey, SimKey, from_log, from_transcript
from evals.sim.score import item_lines, score
from evals.sim.server import start_sim
from rlm.models.openai_compat import OpenAICompatModel, reset_mode_cache


SMALL = {"log": 20_000, "transcript": 300}  # --quick, and the embedded model's rows (lines)
EMBEDDED_CASES = ("log-anomalies", "log-needle", "notes")  # the cases it runs in minutes


@dataclass
class Case:
    name: str
    path: Path
    question: str
    key: SimKey
    expect: str | None = None  # the strategy the gate should take
    context: int = 2048  # the simulated model's context window (tokens)

    @property
    def qk(self) -> QuestionKey:
        qk = self.key.for_prompt(f"Question: {self.question}")
        assert qk is not None, self.question
        return qk


def log_cases(workdir: Path, lines: int) -> list[Case]:
    from fixtures.log import write_log

    p = workdir / "sim.log"
    truth = write_log(p, lines=lines)
    k = from_log(truth)
    txn = truth["txn_ids"][0]
    return [Case("log-anomalies", p, "anomalies?", k, "profile"),
            Case("log-needle", p, f"what happened to {txn}?", k, "grep")]


def transcript_cases(workdir: Path, lines: int) -> list[Case]:
    from fixtures.transcript import write_transcript

    p = workdir / "sim-meeting.txt"
    truth = write_transcript(p, lines=lines)
    k = from_transcript(truth)
    return [Case("transcript-story", p, truth["questions"]["story"], k, "fanout"),
            Case("transcript-revised", p, truth["questions"]["revised"], k, "fanout")]


def notes_case(workdir: Path) -> Case:
    from evals.run import NOTES_QUESTION, write_notes
    from evals.sim.key import from_notes

    p = workdir / "sim-notes.txt"
    truth = write_notes(p)
    return Case("notes", p, NOTES_QUESTION, from_notes(truth, NOTES_QUESTION), "direct", 8192)


def adversarial_copy(case: Case, workdir: Path) -> Case:
    """The same case on a copy of its corpus with instructions planted away from the key lines
    (beside them on the grep path, where the model sees only the hit region)."""
    from fixtures.inject import INSTRUCTIONS, plant

    keep = {ln for ls in item_lines(case.path, case.qk).values() for ln in ls}
    dst = workdir / f"adv-{case.name}{case.path.suffix}"
    if case.expect == "grep":  # the model sees only the hit region: plant beside the hits
        from evals.adversarial import beside

        beside(case.path, dst, keep)
    else:
        plant(case.path, dst, keep)
    key = SimKey(case.key.questions, case.key.records, case.key.record_pattern, list(INSTRUCTIONS))
    return Case(case.name, dst, case.question, key, case.expect, case.context)


async def run_case(case: Case, kind: str, system: str = "rlm", seed: int = 0,
                   context: int | None = None, concurrency: int = 4, rates: dict | None = None,
                   max_calls: int | None = None, max_wall_s: float | None = None,
                   model=None, timeout: float = 10.0) -> dict:
    """One run of `system` on a case: against a simulated reader of `kind`, or against `model`
    (a real one, when given; scored with the same key, no damage log)."""
    server = reader = None
    if model is None:
        server, reader = start_sim(kind, case.key, seed=seed, rates=rates)
        reset_mode_cache()
        m = OpenAICompatModel(f"sim:{kind}", server.url, context_tokens=context or case.context,
                              timeout=timeout, max_attempts=4, backoff_base=0.01)
    else:
        m = model
    kw = {"timeout": timeout, "concurrency": concurrency}
    t0 = time.monotonic()
    try:
        if system == "rlm":
            r = await run_rlm(m, str(case.path), case.question, max_calls=max_calls,
                              max_wall_s=max_wall_s, **kw)
        elif system == "naive-fanout":
            r = await run_naive(m, str(case.path), case.question, None, **kw)
        else:
            r = await run_truncated(m, str(case.path), case.question, timeout=timeout)
    finally:
        if server is not None:
            await m.aclose()
            server.stop()
    s = score(r, case.path, case.qk, reader.log if reader else [])
    row = sim_row(case, kind, r, s, time.monotonic() - t0)
    row["model"] = f"sim:{kind}" if model is None else model.name
    return row


async def sim_fixture_suite(workdir: Path, quick: bool, models: list, concurrency: int = 8,
                            timeout: float = 300.0, embedded_all: bool = False) -> list[dict]:
    """Every fixture path with every reader, and the baselines with the oracle; real models
    with rlm (the embedded one on the --quick sizes: SMALL)."""
    cases = _cases(workdir, quick)
    small = {}
    if any(embedded(m) for m in models):
        (workdir / "small").mkdir(exist_ok=True)
        small = {c.name: c for c in _cases(workdir / "small", True)}
    rows = []
    for c in cases:
        for kind in ("oracle", "noisy"):
            rows.append(await run_case(c, kind, seed=5, concurrency=concurrency))
        rows.append(await run_case(adversarial_copy(c, workdir), "adversarial",
                                   concurrency=concurrency))
        for system in ("naive-fanout", "truncated-direct"):
            rows.append(await run_case(c, "oracle", system, concurrency=concurrency))
        for m in models:
            if embedded(m) and c.name not in EMBEDDED_CASES and not embedded_all:
                continue
            mc = small[c.name] if embedded(m) else c
            rows.append(await run_case(mc, "", "rlm", model=m, concurrency=concurrency,
                                       timeout=timeout))
            if mc is not c:
                with open(mc.path, "rb") as f:
                    rows[-1]["note"] = "; ".join(x for x in (
                        f"smaller fixture: {sum(1 for _ in f):,} lines", rows[-1]["note"]) if x)
            progress(rows[-1])
    from evals.sim_repo import audit_case, mine_case

    for case in (audit_case, mine_case):  # adversarial: instructions on fact lines (evals/adversarial.py)
        for kind in ("oracle", "noisy", "adversarial"):
            rows.append(await case(workdir, kind, seed=5))
        # the embedded model needs minutes per call: 9-36 calls only with --embedded-all
        for m in [m for m in models if embedded_all or not embedded(m)]:
            rows.append(await case(workdir, "", model=m))
            progress(rows[-1])
    return rows


def _cases(workdir: Path, quick: bool) -> list[Case]:
    return (log_cases(workdir, SMALL["log"] if quick else 200_000)
            + transcript_cases(workdir, SMALL["transcript"] if quick else 1200)
            + [notes_case(workdir)])


def sim_row(case: Case, kind: str, r: RunResult, s: dict, wall: float) -> dict:
    notes = []
    if case.expect and r.system == "rlm" and r.strategy != case.expect:
        notes.append(f"EXPECTED the {case.expect} path")
    if s["missed_lines"]:
        notes.append(f"missed key lines {s['missed_lines'][:4]}")
    if s["lost_examples"]:
        notes.append(f"lost {', '.join(s['lost_examples'])}")
    if s["damage"]:
        notes.append("injected " + ", ".join(f"{k} {v}" for k, v in sorted(s["damage"].items())))
    if s["offby_near"]:
        notes.append(f"off-by-<=2 recovered {s['offby_near_recovered']}/{s['offby_near']}")
    if s["failed_chunks"]:
        notes.append(f"failed {', '.join(s['failed_chunks'][:4])}"
                     + ("" if s["failures_named"] else " NOT all named in coverage"))
    if r.note:
        notes.append(r.note)
    return {"case": case.name, "reader": kind, "system": r.system, "strategy": r.strategy,
            "recall": s["recall"], "fabricated_accepted": s["fabricated_accepted"],
            "misplaced": s["misplaced"], "numbers_lost": s["numbers_lost"],
            "failures_named": s["failures_named"], "complete": r.complete, "calls": r.calls,
            "prompt_tokens": r.prompt_tokens, "completion_tokens": r.completion_tokens,
            "wall_s": round(wall, 2), "note": "; ".join(notes), "score": s}
