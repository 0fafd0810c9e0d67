"""The S-NIAH and OOLONG style suites: rlm against simulated readers (and a real model when one
is given), next to the naive baselines, scored by code against the generators' answer keys.

    python -m evals.run --suite sniah,oolong [--quick] [--model M --base-url URL]

Systems per case: ``rlm`` with each simulated reader (oracle, noisy, adversarial), ``rlm`` with
the embedded model (only when llama_cpp is installed) and with ``--model`` (when given); the
baselines ``naive-fanout`` (no gate: every chunk mapped, findings reduced and synthesised) and
``truncated-direct`` (one call over the leading lines that fit), both with the oracle reader.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

from evals.adversarial import oolong_copy, sniah_copy
from evals.harness import RunResult, run_naive, run_rlm, run_truncated
from evals.sim.key import SimKey
from evals.sim.readers import TAG_FAB, TAG_OBEY
from evals.sim.server import start_sim
from fixtures.oolong import KINDS_COUNT, answer_matches
from rlm.engine.reducer import numbers_and_ids
from rlm.models.openai_compat import OpenAICompatModel, reset_mode_cache

SNIAH_FULL = {"tokens": (8_000, 32_000, 128_000, 1_000_000), "depths": (0.1, 0.5, 0.9)}
SNIAH_QUICK = {"tokens": (8_000, 32_000), "depths": (0.1, 0.5, 0.9)}
OOLONG_FULL = {"records": (1_000, 4_000)}
OOLONG_QUICK = {"records": (400,)}
# the embedded 135M model reads ~350 prompt tok/s and writes ~80 schema-bound tok/s on 2 cores:
# its rows use the smallest sizes, so that each suite stays under ~10 minutes
SNIAH_EMBEDDED = {"tokens": (8_000,), "depths": (0.5,)}
# a records call of 50 lines took SmolLM2 minutes (schema-bound output, retries): one chunk,
# one question
OOLONG_EMBEDDED = {"records": (40,), "kinds": ("count",)}
SIM_CONTEXT = 8192
READERS = ("oracle", "noisy", "adversarial")
PLANTS = ("nothing", "cite", "both")  # S-NIAH depth i gets PLANTS[i % 3] beside its needle


async def _with_model(model, system: str, path: Path, question: str, concurrency: int,
                      timeout: float, budget: dict | None = None) -> RunResult:
    kw = {"timeout": timeout, "concurrency": concurrency}
    if system == "rlm":
        return await run_rlm(model, str(path), question, **kw, **(budget or {}))
    if system == "naive-fanout":
        return await run_naive(model, str(path), question, None, **kw)
    return await run_truncated(model, str(path), question, timeout=timeout)


async def run_system(system: str, reader: str | None, path: Path, question: str, key: SimKey,
                     model=None, concurrency: int = 8, timeout: float = 30.0, seed: int = 11,
                     rates: dict | None = None, budget: dict | None = None
                     ) -> tuple[RunResult, list]:
    """One run; reader set: a simulated reader started for it; else ``model`` (a real one).
    ``budget``: rlm's max_calls / max_wall_s / max_tokens for the run."""
    if reader is None:
        r = await _with_model(model, system, path, question, concurrency, timeout, budget)
        return r, []
    server, rd = start_sim(reader, key, seed=seed, rates=rates)
    reset_mode_cache()
    m = OpenAICompatModel(f"sim:{reader}", server.url, context_tokens=SIM_CONTEXT, timeout=10.0,
                          max_attempts=4, backoff_base=0.01)
    try:
        r = await _with_model(m, system, path, question, concurrency, 10.0, budget)
    finally:
        await m.aclose()
        server.stop()
    return r, rd.log


def fabricated(r: RunResult) -> int:
    return sum(1 for f in r.findings if f.get("verified")
               and (TAG_FAB in f["claim"] or TAG_OBEY in f["claim"]))


def suite_row(suite: str, case: str, system: str, model: str, r: RunResult, recall: float | None,
              lost: int | None, note: str, wall: float) -> dict:
    notes = [n for n in (note, r.note, f"error: {r.error}" if r.error else "") if n]
    return {"suite": suite, "case": case, "system": system, "model": model,
            "strategy": r.strategy, "recall": recall, "fabricated_accepted": fabricated(r),
            "numbers_lost": lost, "calls": r.calls, "prompt_tokens": r.prompt_tokens,
            "completion_tokens": r.completion_tokens, "wall_s": round(wall, 2),
            "complete": r.complete, "note": "; ".join(notes)}


def progress(row: dict) -> None:
    print(f"  {row['case']} | {row['system']} | {row['model']}: recall "
          f"{'—' if row['recall'] is None else format(row['recall'], '.0%')}, {row['calls']} calls, "
          f"{row['wall_s']:.0f}s", file=sys.stderr, flush=True)


def embedded(m) -> bool:
    return getattr(getattr(m, "profile", None), "tier", None) == "local"


def systems(extra_models: list, size, cfg: dict, small: dict, dim: str
            ) -> list[tuple[str, str | None, object]]:
    """(system, reader, model) triples for one size: readers with rlm and baselines with the
    oracle (at the suite's sizes), then real models with rlm and both baselines (the embedded
    model only at its small sizes)."""
    out = []
    if size in cfg[dim]:
        out = [("rlm", rd, None) for rd in READERS]
        out += [("naive-fanout", "oracle", None), ("truncated-direct", "oracle", None)]
    for m in extra_models:
        if size in (small if embedded(m) else cfg)[dim]:
            out += [("rlm", None, m), ("naive-fanout", None, m), ("truncated-direct", None, m)]
    return out


def sizes(cfg: dict, small: dict, dim: str, extra_models: list) -> list:
    extra = small[dim] if any(embedded(m) for m in extra_models) else ()
    return sorted(set(cfg[dim]) | set(extra))


# ------------------------------------------------------------------------------ S-NIAH

async def sniah_suite(workdir: Path, quick: bool, extra_models: list, concurrency: int = 8,
                      timeout: float = 300.0) -> list[dict]:
    from fixtures.sniah import write_sniah

    cfg = SNIAH_QUICK if quick else SNIAH_FULL
    rows = []
    for tokens in sizes(cfg, SNIAH_EMBEDDED, "tokens", extra_models):
        for kind in ("uuid", "words"):
            files = []
            for d in cfg["depths"]:
                p = workdir / f"sniah-{tokens}-{kind}-{d}.txt"
                files.append((p, write_sniah(p, tokens, (d,), kind, distractors=3)))
            case = f"{tokens // 1000:,}k tok, {kind} key"
            for system, reader, model in systems(extra_models, tokens, cfg, SNIAH_EMBEDDED,
                                                 "tokens"):
                mine = [f for f, d in zip(files, cfg["depths"])
                        if not embedded(model) or d in SNIAH_EMBEDDED["depths"]]
                rows.append(await _sniah_row(case, system, reader, model, mine, concurrency,
                                             timeout))
                progress(rows[-1])
    return rows


async def _sniah_row(case, system, reader, model, files, concurrency, timeout) -> dict:
    t0 = time.monotonic()
    hits, lost, runs, logs, fab = 0, 0, [], [], 0
    for i, (p, truth) in enumerate(files):
        key = SimKey.from_json(truth["sim_key"])
        if reader == "adversarial":  # instructions beside the needle: in the grep region
            p, key = sniah_copy(p, truth, p.with_name("adv-" + p.name), PLANTS[i % len(PLANTS)])
        r, log = await run_system(system, reader, p, truth["question"], key, model, concurrency,
                                  timeout)
        runs.append(r)
        logs += log
        v = truth["values"][0]
        in_answer = v in (r.answer or "")
        hits += in_answer
        found = any(v in f.get("evidence", "") for f in r.findings if f.get("verified"))
        lost += int(found and not in_answer)
        # a line cited because the text said so, verified although it holds no needle
        fab += sum(1 for e in log if e["kind"] == "obeyed" and e.get("what") == "cite"
                   for f in r.findings if f.get("verified") and v not in f.get("evidence", "")
                   and f["source"]["line_start"] <= e["line"] <= f["source"]["line_end"])
    agg = _sum_runs(runs)
    strategies = sorted({x.strategy for x in runs})
    note = f"{len(files)} depth{'s' if len(files) != 1 else ''}" + reader_note(runs, logs)
    if system == "rlm" and "grep" not in strategies:
        note += "; EXPECTED the grep path (the key is in the question)"
    agg.strategy = "/".join(strategies)
    name = f"sim:{reader}" if reader else model.name
    row = suite_row("sniah", case, system, name, agg, hits / len(files), lost, note,
                    time.monotonic() - t0)
    row["fabricated_accepted"] += fab
    return row


def reader_note(runs: list[RunResult], log: list[dict]) -> str:
    """What the reader did (its damage log) and whether every failed chunk is named."""
    kinds: dict[str, int] = {}
    for e in log:
        k = e["kind"] if e["kind"] != "obeyed" else f"obeyed ({e.get('what')})"
        kinds[k] = kinds.get(k, 0) + 1
    out = "; injected " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) if kinds else ""
    failed = [c["chunk"] for r in runs for c in r.failed if r.system != "truncated-direct"]
    if failed:  # (the truncated read is the harness's own call, not rlm's coverage)
        named = all(c["chunk"] in r.statement for r in runs for c in r.failed)
        out += f"; {len(failed)} failed chunk(s) " + ("all named in coverage" if named
                                                       else "NOT all named in coverage")
    return out


def _sum_runs(runs: list[RunResult]) -> RunResult:
    a = RunResult(system=runs[0].system, strategy=runs[0].strategy, complete=True)
    for r in runs:
        a.findings += r.findings
        a.calls += r.calls
        a.prompt_tokens += r.prompt_tokens
        a.completion_tokens += r.completion_tokens
        a.complete &= r.complete
        a.answer += "\n" + (r.answer or "")
        if r.error:
            a.error = r.error
    notes = sorted({r.note for r in runs if r.note and not r.note.startswith("the whole")})
    a.note = "; ".join(notes)[:200]
    return a


# ------------------------------------------------------------------------------ OOLONG

def first_words(answer: str) -> str:
    """The answer's first paragraph after code's "**Found:** …" headline (the model's words,
    or code's exact count)."""
    paras = [p for p in (answer or "").split("\n\n")
             if not p.startswith(("**Found:**", "**Stopped by the budget**"))]
    return paras[0] if paras else ""


QUALIFIED = re.compile(r"\bbetween -?[\d,.]+%? and\b|\bat least\b|\bat most\b|"
                       r"\bknown records\b|\bamong the known\b")


def honest(kind: str, want, answer: str) -> bool:
    """Exact, or a bound the answer says it is ("between", "at least", "of the known records")
    that holds the true value where it can be checked."""
    first = first_words(answer)
    if oolong_correct(kind, want, answer) or in_range(kind, want, answer):
        return True
    m = re.search(r"\bat least (-?[\d,.]+)", first)
    if m and isinstance(want, (int, float)):
        return float(m.group(1).rstrip(".").replace(",", "")) <= want
    return bool(QUALIFIED.search(first)) and not re.search(r"\bbetween\b", first) \
        or kind in ("top", "per_label") and bool(QUALIFIED.search(first))


def states_answer(kind: str, answer: str) -> bool:
    """Whether the answer states one (a number; a label for rankings), right or wrong."""
    first = first_words(answer)
    return bool(re.search(r"'[a-z ]+'" if kind in ("most_common", "top") else r"\d", first))


def wrong_example(stated_exact: bool, spec: dict, r: RunResult) -> str:
    got = " ".join(first_words(r.answer).split())[:70]
    return (f"{spec['kind']}: want {spec['answer']}, got “{got}”"
            + (" (WRONG, stated as exact)" if stated_exact else ""))


def in_range(kind: str, want, answer: str) -> bool:
    """A stated range ("between 84 and 120 ...") that holds the true value."""
    m = re.search(r"between (-?[\d,.]+)%? and (-?[\d,.]+)", first_words(answer))
    if not m or kind == "most_common" or not isinstance(want, (int, float)):
        return False
    lo, hi = (float(x.rstrip(".").replace(",", "")) for x in m.groups())
    return lo <= want <= hi


def oolong_correct(kind: str, want, answer: str) -> bool:
    first = first_words(answer)
    if kind not in KINDS_COUNT:  # sums, averages, extremes, top k, per label (evals helper)
        return answer_matches({"kind": kind, "answer": want}, first)
    if kind == "most_common":
        m = re.search(r"'([a-z ]+)'", first) or re.search(r"\b(abbreviation|entity|description|"
                                                          r"human|location|numeric)\b", first)
        return bool(m) and m.group(1) == want
    if "between" in first.split(".")[0]:
        return False  # a range is honest, but not an exact answer
    if kind == "share":
        m = re.search(r"\b0?\.\d+\b", first)
        return bool(m) and abs(float(m.group(0)) - want) < 5e-4
    m = re.search(r"(?<![\w.])-?\d[\d,]*(?![\w.])", first)
    return bool(m) and int(m.group(0).replace(",", "")) == want


async def oolong_suite(workdir: Path, quick: bool, extra_models: list, concurrency: int = 8,
                       timeout: float = 300.0) -> list[dict]:
    from fixtures.oolong import write_oolong

    cfg = OOLONG_QUICK if quick else OOLONG_FULL
    rows = []
    for n in sizes(cfg, OOLONG_EMBEDDED, "records", extra_models):
        p = workdir / f"oolong-{n}.txt"
        truth = write_oolong(p, records=n)
        key = SimKey.from_json(truth["sim_key"])
        adv = oolong_copy(p, truth, p.with_name("adv-" + p.name))
        for system, reader, model in systems(extra_models, n, cfg, OOLONG_EMBEDDED, "records"):
            t0 = time.monotonic()
            runs, ok, wrong, ranged, logs, wrong_exact = [], 0, [], 0, [], 0
            path, k = adv if reader == "adversarial" else (p, key)
            for q, spec in truth["questions"].items():
                if embedded(model) and spec["kind"] not in OOLONG_EMBEDDED["kinds"]:
                    continue
                r, log = await run_system(system, reader, path, q, k, model, concurrency, timeout)
                runs.append(r)
                logs += log
                good = oolong_correct(spec["kind"], spec["answer"], r.answer)
                ok += good
                fair = honest(spec["kind"], spec["answer"], r.answer)
                ranged += fair and not good
                wrong_exact += not fair and states_answer(spec["kind"], r.answer)
                if not fair and states_answer(spec["kind"], r.answer):  # wrong first
                    wrong.insert(len([w for w in wrong if w[0]]), (True, spec, r))
                elif not good:  # a bound, or no answer at all
                    wrong.append((False, spec, r))
            agg = _sum_runs(runs)
            agg.strategy = "/".join(sorted({x.strategy for x in runs}))
            name = f"sim:{reader}" if reader else model.name
            note = (f"{ok}/{len(runs)} exact" + (f", {ranged} stated as a bound that holds the "
                                                   "true value" if ranged else "")
                    + (f"; {wrong_example(*wrong[0])}" if wrong else "") + reader_note(runs, logs))
            row = suite_row("oolong", f"{n:,} records", system, name, agg, ok / len(runs), None,
                            note, time.monotonic() - t0)
            row["fabricated_accepted"] = wrong_exact  # a wrong number stated as exact
            rows.append(row)
            progress(row)
    return rows
