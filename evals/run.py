"""The eval harness: every case, rlm next to two baselines, scored by code against answer keys.

    python -m evals.run [--quick] [--cases log-anomalies,fault,...] [--model M --base-url URL]
    python -m evals.run --suite sim,sniah,oolong [--quick] [--model M --base-url URL]

Cases (fixture sizes for the default run, then --quick):
- log-anomalies      log fixture (600,000 lines; 20,000), "anomalies?": a needle counts when a
                     verified finding cites its line (12 needles).
- log-needle         same log, "what happened to TXN-…?" (one panic line).
- notes-180          a 180-line notes file (prose: 180 log lines would not fit the embedded
                     model's 8k context): must take the direct path; one planted fact.
- transcript-story   transcript fixture (600 lines; 300), the 5-piece story question: a piece
                     counts when a verified finding cites its line.
- transcript-revised same transcript, the revised budget: counts when the final value's line is
                     cited by a verified finding or the final value is in the answer.
- fault              the fake OpenAI-compatible server (in-process, always, whatever --model)
                     fails the chunks holding two planted lines: coverage must name exactly those.
- reduce-guard       the fake server again, with a merge model that drops an id from every
                     third merge: the reduce loop must refuse those (no number or id lost).
- context-assembly   the same facts in a clean prompt vs buried in an accumulated session.

Systems: rlm (as shipped), naive-fanout (strategy forced to fanout: no gate; capped with
--naive-max-calls where the full fan-out would need more calls, and then marked CAPPED), and
truncated-direct (one call over the leading lines that fit the window). When a baseline would
make exactly rlm's calls (the gate itself chose fan-out; or the whole file fits one call), the
row reuses rlm's run and says so, unless --rerun-identical.

Writes evals/RESULTS.md and evals/results.json (unless --no-write). Run records, call cache and
calibration profiles go to a temporary directory, so a user's profile does not change the
numbers (--use-profile to let it).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import sys
import tempfile
import time
from dataclasses import asdict, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

import anyio  # noqa: E402

from evals import scoring  # noqa: E402
from evals.harness import (RunResult, run_naive, run_rlm, run_truncated,  # noqa: E402
                           truncated_extent)

ALL_CASES = ("log-anomalies", "log-needle", "notes-180", "transcript-story", "transcript-revised",
             "fault", "reduce-guard", "context-assembly")
# Sizes: the embedded model reads ~40-100 prompt tokens/s on 2 busy cores once prompts reach a
# few thousand tokens, so every window-sized call costs one to three minutes. The default run
# makes about 16 such calls (transcript fan-outs, truncated reads, capped naive fan-outs).
FULL = {"log_lines": 600_000, "transcript_lines": 600, "naive_max_calls": 2, "ca_seeds": [7, 8],
        "buried_tokens": 2500}
QUICK = {"log_lines": 20_000, "transcript_lines": 300, "naive_max_calls": 1, "ca_seeds": [7],
         "buried_tokens": 1500}

NOTES_FACT_LINE = 131
NOTES_QUESTION = "Which room is the team offsite booked in?"
NOTES_VALUE = "4B"


# ------------------------------------------------------------------------------ fixtures

def write_notes(path: Path, lines: int = 180) -> dict:
    """A 180-line notes file of short routine items with one planted fact."""
    from rlm.fixtures.transcript import PREDICATES, SUBJECTS

    rng = random.Random("rlm-eval-notes")
    out = [f"- {rng.choice(SUBJECTS)} {rng.choice(PREDICATES)}." for _ in range(lines)]
    out[0] = "Team notes, week 12"
    fact = f"- The team offsite is booked at Harbour Hall, room {NOTES_VALUE}, on June 12."
    out[NOTES_FACT_LINE - 1] = fact
    path.write_text("\n".join(out) + "\n")
    return {"line": NOTES_FACT_LINE, "value": NOTES_VALUE, "text": fact, "lines": lines}


class Fixtures:
    def __init__(self, workdir: Path, sizes: dict):
        self.dir, self.sizes, self._keys = workdir, sizes, {}

    def log(self):
        if "log" not in self._keys:
            from rlm.fixtures.log import write_log

            p = self.dir / "eval.log"
            self._keys["log"] = (p, write_log(p, lines=self.sizes["log_lines"]))
        return self._keys["log"]

    def transcript(self):
        if "tr" not in self._keys:
            from rlm.fixtures.transcript import write_transcript

            p = self.dir / "meeting.txt"
            self._keys["tr"] = (p, write_transcript(p, lines=self.sizes["transcript_lines"]))
        return self._keys["tr"]

    def notes(self):
        if "notes" not in self._keys:
            p = self.dir / "notes.txt"
            self._keys["notes"] = (p, write_notes(p))
        return self._keys["notes"]


# ------------------------------------------------------------------------------ rows

def row(case: str, r: RunResult, model: str, score: dict, note: str = "") -> dict:
    err = f"error: {r.error}" if r.error and r.error not in r.note else ""
    notes = [n for n in (r.note, note, err) if n]
    return {"case": case, "system": r.system, "model": model, "strategy": r.strategy,
            "recall": score.get("recall"), "precision": score.get("precision"), "calls": r.calls,
            "prompt_tokens": r.prompt_tokens, "completion_tokens": r.completion_tokens,
            "wall_s": r.wall_s, "complete": r.complete, "note": "; ".join(notes), "score": score,
            "answer": (r.answer or "")[:600], "statement": r.statement,
            "reduce": r.reduce, "chunks": f"{r.chunks_ok}/{r.chunks_total}"}


def reused(r: RunResult, system: str, why: str) -> RunResult:
    return replace(r, system=system, note=f"same run as rlm ({why}); not re-run")


async def three_systems(case: str, model, path: Path, question: str, args, scorer,
                        preserve: list) -> list[dict]:
    """rlm, naive-fanout and truncated-direct on one question; scorer(RunResult) -> dict."""
    rows = []
    kw = {"timeout": args.timeout, "concurrency": args.concurrency}
    rlm = await run_rlm(model, str(path), question, **kw)
    rows.append(row(case, rlm, model.name, scorer(rlm)))
    if rlm.strategy == "fanout" and not args.rerun_identical:
        naive = reused(rlm, "naive-fanout", "the gate itself chose fan-out: identical calls")
    else:
        naive = await run_naive(model, str(path), question, args.naive_max_calls, **kw)
    rows.append(row(case, naive, model.name, scorer(naive)))
    lines, total = truncated_extent(model, str(path))
    if rlm.strategy == "direct" and len(lines) >= total and not args.rerun_identical:
        trunc = reused(rlm, "truncated-direct", "the whole file fits one call: identical call")
    else:
        trunc = await run_truncated(model, str(path), question, timeout=args.timeout)
    rows.append(row(case, trunc, model.name, scorer(trunc)))
    for r in (rlm, naive):
        if r.strategy == "fanout" and not r.note.startswith("same run"):
            final = [f["claim"] for f in scoring.verified(r.findings)]
            preserve.append({"case": case, "system": r.system,
                             **scoring.preservation(r.map_claims, final)})
    return rows


# ------------------------------------------------------------------------------ cases

async def case_log_anomalies(model, fx: Fixtures, args, preserve) -> list[dict]:
    path, key = fx.log()
    targets = [n["line"] for n in key["needles"]]
    return await three_systems("log-anomalies", model, path, "anomalies?", args,
                               lambda r: scoring.score_lines(r.findings, targets), preserve)


async def case_log_needle(model, fx: Fixtures, args, preserve) -> list[dict]:
    path, key = fx.log()
    txn = key["txn_ids"][0]
    line = next(n["line"] for n in key["needles"] if n["id"] == txn)
    return await three_systems("log-needle", model, path, f"what happened to {txn}?", args,
                               lambda r: scoring.score_lines(r.findings, [line]), preserve)


async def case_notes(model, fx: Fixtures, args, preserve) -> list[dict]:
    path, key = fx.notes()

    def score(r):
        s = scoring.score_lines(r.findings, [key["line"]])
        if scoring.value_in_text(key["value"], r.answer):
            s["recall"], s["value_in_answer"] = 1.0, True
        return s

    rows = await three_systems("notes-180", model, path, NOTES_QUESTION, args, score, preserve)
    if rows[0]["strategy"] != "direct":
        rows[0]["note"] = ("EXPECTED the direct path; " + rows[0]["note"]).strip("; ")
    return rows


async def case_story(model, fx: Fixtures, args, preserve) -> list[dict]:
    path, key = fx.transcript()
    targets = [s["line"] for s in key["story"]]
    return await three_systems("transcript-story", model, path, key["questions"]["story"], args,
                               lambda r: scoring.score_lines(r.findings, targets), preserve)


async def case_revised(model, fx: Fixtures, args, preserve) -> list[dict]:
    path, key = fx.transcript()
    rev = next(r for r in key["revisions"] if r["question"] == key["questions"]["revised"])
    return await three_systems("transcript-revised", model, path, rev["question"], args,
                               lambda r: scoring.score_revised(r.findings, r.answer, rev), preserve)


FAULT_LINES = {"POISON-ALPHA": 1000, "POISON-BRAVO": 1900}


def write_fault_corpus(path: Path, n: int = 2400) -> None:
    lines = [f"Line {i} of ordinary prose about the weather and lunch plans." for i in range(1, n + 1)]
    lines[299] = "The committee approved the PLANNED change to the schedule."
    for marker, ln in FAULT_LINES.items():
        lines[ln - 1] = f"A {marker} line: the server fails every request for this chunk."
    path.write_text("\n".join(lines) + "\n")


async def fault_case(workdir: Path, concurrency: int = 8) -> tuple[list[dict], list[str]]:
    """rlm and naive fan-out against the in-process fake server, which fails (HTTP 500; a dropped
    connection) every request for the chunks holding the two poisoned lines. (A malformed reply
    would not do: the retry with the validation error gets a good answer, as it should.)"""
    import re

    from rlm.testing import FakeServer
    from rlm.models.openai_compat import OpenAICompatModel, reset_mode_cache

    path = workdir / "fault.txt"
    write_fault_corpus(path)
    numbered = re.compile(r"^(\d+)\| (.*)$", re.M)

    def mapper(req, text):
        return {"findings": [{"line": int(m.group(1)), "claim": "the committee approved a change",
                              "quote": "PLANNED"} for m in numbered.finditer(text)
                             if "PLANNED" in m.group(2)][:3]}

    rows, expected_all = [], []
    with FakeServer() as server:
        server.on("MapResult", mapper)
        server.on("AnswerResult", lambda r, t: {"answer": "The committee approved a change.",
                                                "cites": [1]})
        server.fault("POISON-ALPHA", "500")
        server.fault("POISON-BRAVO", "drop")
        for system in ("rlm", "naive-fanout"):
            reset_mode_cache()
            model = OpenAICompatModel("fake-server", server.url, context_tokens=2048, timeout=5.0,
                                      max_attempts=2, backoff_base=0.01)
            kw = {"timeout": 5.0, "concurrency": concurrency}
            if system == "rlm":
                r = await run_rlm(model, str(path), "what did the committee decide?", **kw)
            else:
                r = await run_naive(model, str(path), "what did the committee decide?", None, **kw)
            await model.aclose()
            expected = [c[0] for c in r.plan if any(c[2] <= ln <= c[3] for ln in FAULT_LINES.values())]
            expected_all = expected
            s = scoring.score_fault(r.failed, r.statement, r.complete, expected)
            note = (f"failed chunks named: {', '.join(s['listed']) or 'none'}; expected "
                    f"{', '.join(expected)}; {'exact' if s['exact'] else 'NOT exact'}")
            rows.append(row("fault", r, "fake-server", s, note))
    return rows, expected_all


def write_orders_corpus(path: Path, n: int = 3000, every: int = 25) -> list[str]:
    """Prose with an order fact (id, units, depot) every `every` lines; returns the order ids."""
    rng = random.Random("rlm-eval-orders")
    lines = [f"Line {i} of ordinary prose about the weather and lunch plans." for i in range(1, n + 1)]
    ids = []
    for k, ln in enumerate(range(every, n + 1, every)):
        oid = f"ORD-{1000 + 37 * k}"
        ids.append(oid)
        lines[ln - 1] = (f"Order {oid} shipped {rng.randrange(2, 99)} units to depot "
                         f"{rng.randrange(1, 9)}.")
    path.write_text("\n".join(lines) + "\n")
    return ids


async def reduce_guard_case(workdir: Path, preserve: list, concurrency: int = 8) -> list[dict]:
    """The reduce loop against a scripted merge model that drops an identifier from every third
    merge it proposes: the guard must refuse those, so no number or id is lost."""
    import re

    from rlm.testing import FakeServer
    from rlm.models.openai_compat import OpenAICompatModel, reset_mode_cache

    path = workdir / "orders.txt"
    ids = write_orders_corpus(path)
    numbered = re.compile(r"^(\d+)\| (.*)$", re.M)
    item = re.compile(r"^\[(\d+)\] (.*) \(.*?:\d+-\d+\)$", re.M)

    def mapper(req, text):
        return {"findings": [{"line": int(m.group(1)), "claim": m.group(2).rstrip("."),
                              "quote": m.group(2)[:20]} for m in numbered.finditer(text)
                             if m.group(2).startswith("Order ")][:3]}

    def merge(req, text):
        items = [(int(m.group(1)), m.group(2)) for m in item.finditer(text)]
        groups = []
        for g, k in enumerate(range(0, len(items) - 1, 2)):
            (i, a), (j, b) = items[k], items[k + 1]
            if g % 3 == 2:  # adversarial: drop the second claim's order id
                b = re.sub(r"ORD-\d+", "that order", b)
            groups.append({"ids": [i, j], "claim": f"{a}; {b}"[:240]})
        return {"groups": groups}

    with FakeServer() as server:
        server.on("MapResult", mapper)
        server.on("MergeResult", merge)
        server.on("AnswerResult", lambda r, t: {"answer": "Many orders shipped to depots.",
                                                "cites": [1]})
        reset_mode_cache()
        model = OpenAICompatModel("fake-server", server.url, context_tokens=1024, timeout=5.0,
                                  max_attempts=2, backoff_base=0.01)
        r = await run_rlm(model, str(path), "which orders shipped where?", timeout=5.0,
                          concurrency=concurrency)
        await model.aclose()
    final = [f["claim"] for f in scoring.verified(r.findings)]
    p = scoring.preservation(r.map_claims, final)
    preserve.append({"case": "reduce-guard", "system": "rlm (scripted merge)", **p})
    kept = [oid for oid in ids if any(oid in c for c in final)]
    score = {"recall": len(kept) / len(ids), "precision": None, "preservation": p}
    rd = r.reduce
    note = (f"{len(ids)} planted orders; reduce: {rd['rounds']} round(s), stopped {rd['stopped']}, "
            f"{rd['refused_merges']} merge(s) refused for dropping an id; "
            f"{p['missing']} of {p['total']} numbers/ids lost")
    return [row("reduce-guard", r, "fake-server", score, note)]


async def case_reduce_guard(model, fx: Fixtures, args, preserve) -> list[dict]:
    return await reduce_guard_case(fx.dir, preserve)


async def case_fault(model, fx: Fixtures, args, preserve) -> list[dict]:
    rows, _ = await fault_case(fx.dir, args.concurrency if args.concurrency > 1 else 8)
    return rows


async def case_context_assembly(model, fx: Fixtures, args, preserve) -> list[dict]:
    from evals.context_assembly import build_items, run_context_assembly

    items = build_items(fx.sizes["ca_seeds"], fx.dir)
    buried = min(args.buried_tokens or fx.sizes["buried_tokens"], int(model.context_tokens * 0.6))
    out = []
    for res in await run_context_assembly(model, items, buried, timeout=args.timeout):
        mean_prompt = round(sum(d["prompt_tokens_est"] for d in res.details) / max(1, res.total))
        r = RunResult(system=f"{res.layout}-layout", strategy="synth", calls=res.calls,
                      prompt_tokens=res.prompt_tokens, completion_tokens=res.completion_tokens,
                      wall_s=res.wall_s, complete=True)
        score = {"recall": res.correct / res.total if res.total else None, "precision": None,
                 "correct": res.correct, "stale": res.stale, "total": res.total,
                 "errors": res.errors, "details": res.details}
        note = (f"{res.correct}/{res.total} final values right, {res.stale} stale, "
                f"{res.errors} failed calls; ~{mean_prompt:,} prompt tokens per question")
        out.append(row("context-assembly", r, model.name, score, note))
    return out


CASE_FUNCS = {
    "log-anomalies": case_log_anomalies, "log-needle": case_log_needle, "notes-180": case_notes,
    "transcript-story": case_story, "transcript-revised": case_revised, "fault": case_fault, "reduce-guard": case_reduce_guard,
    "context-assembly": case_context_assembly,
}


# ------------------------------------------------------------------------------ output

def _f(x, pct=True) -> str:
    if x is None:
        return "—"
    return f"{x:.0%}" if pct else f"{x:,}"


COLUMNS = ("case", "system", "model", "strategy", "recall", "precision", "calls", "prompt tok",
           "compl tok", "wall s", "complete")


def table_rows(rows: list[dict]) -> list[list[str]]:
    out = []
    for r in rows:
        model = r["model"].replace("local:SmolLM2-135M-Instruct.Q4_1", "local (SmolLM2-135M)")
        out.append([r["case"], r["system"], model, r["strategy"], _f(r["recall"]),
                    _f(r["precision"]), f"{r['calls']:,}", f"{r['prompt_tokens']:,}",
                    f"{r['completion_tokens']:,}", f"{r['wall_s']:.1f}",
                    "yes" if r["complete"] else "NO"])
    return out


def text_table(rows: list[dict]) -> str:
    body = table_rows(rows)
    widths = [max(len(c), *(len(b[i]) for b in body)) for i, c in enumerate(COLUMNS)]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths))  # noqa: E731
    return "\n".join([line(COLUMNS), line(["-" * w for w in widths])] + [line(b) for b in body])


def md_table(rows: list[dict]) -> str:
    out = ["| " + " | ".join(COLUMNS) + " | note |",
           "|" + "|".join("---" if i < 4 else "---:" for i in range(len(COLUMNS))) + "|---|"]
    for r, cells in zip(rows, table_rows(rows)):
        out.append("| " + " | ".join(cells) + " | " + r["note"].replace("|", "/") + " |")
    return "\n".join(out)


def machine_note(meta: dict) -> str:
    return (f"{meta['cpus']} CPU core(s), {meta['platform']}, Python {meta['python']}, "
            f"llama-cpp-python {meta['llama_cpp']}; load average {meta['load_before']} before and "
            f"{meta['load_after']} after the run (other processes shared the machine when these are "
            f"above the core count, and wall times are then inflated)")


def write_results(out_dir: Path, rows: list[dict], meta: dict, preserve: list[dict]) -> None:
    tot = sum(p["total"] for p in preserve)
    miss = sum(p["missing"] for p in preserve)
    pres_line = (f"{miss} of {tot} numbers/ids in verified map findings are missing from the final "
                 f"findings ({(miss / tot if tot else 0):.0%}) over {len(preserve)} fan-out run(s); "
                 "per run (runs whose map calls gave no verified finding with a number or id show "
                 "0 of 0)"
                 if tot else f"no fan-out run produced a verified map finding with a number or id "
                             f"({len(preserve)} fan-out run(s)): nothing to measure")
    ca = [r for r in rows if r["case"] == "context-assembly"]
    md = [
        "# rlm eval results",
        "",
        f"Date: {meta['date']}. Model: `{meta['model']}`. Mode: {meta['mode']} "
        f"({meta['sizes_note']}). Total wall time {meta['wall_s']:.0f}s.",
        "",
        f"Machine: {machine_note(meta)}.",
        "",
        f"Reproduce: `{meta['command']}` (any OpenAI-compatible server: add `--model NAME "
        "--base-url URL`).",
        "",
        md_table(rows),
        "",
        "## How the numbers are scored (code, never a model)",
        "",
        "- **recall**: log cases and the story: share of key lines cited by a *verified* finding "
        "(log: 12 needles; needle: the panic line; story: 5 pieces). Notes: the fact's line cited or "
        "its value in the answer. Revised value: the final value's line cited, or the final value "
        "stated in the answer. Fault: share of the failed chunks that the coverage names (in "
        "`chunks_failed` and in the statement). Context assembly: share of questions whose final "
        "value is in the answer.",
        "- **precision**: share of verified findings that cite a relevant line (revised: any of the "
        "topic's value lines); fault: share of the named chunks that were really failed; — when there "
        "is no verified finding.",
        "- **complete**: the run's own coverage verdict (truncated-direct: whether every line was "
        "read). A naive fan-out marked CAPPED was stopped by `--naive-max-calls` and is incomplete by "
        "construction.",
        "- Tokens are the server's counts (llama.cpp's for the embedded model). The embedded model "
        "is loaded once before the first case; no row's wall time includes loading it. Rows on "
        "`fake-server` ran against rlm/testing/fake_server.py in-process, whatever `--model` was.",
        "",
        "## Number and identifier preservation (reduce loop)",
        "",
        pres_line + ".",
        "",
    ]
    for p in preserve:
        md.append(f"- {p['case']} / {p['system']}: {p['missing']} of {p['total']} missing"
                  + (f" ({', '.join(p['missing_examples'])})" if p["missing_examples"] else ""))
    if ca:
        md += ["", "## Context assembly", "",
               "The same facts (each revised topic's value lines and its distractors) given to the "
               "same model with the same instructions and question, laid out two ways: **clean** "
               "(rlm's synthesis prompt: the question, then only the facts as numbered findings) and "
               "**buried** (an accumulated session: earlier tool calls with raw output — log lines, "
               "`sed -n` excerpts that contain the facts, `ls`/`wc` — and earlier replies to "
               "unrelated questions; the question last).", ""]
        for r in ca:
            md.append(f"- {r['system']}: {r['note']}")
    md += ["", "## Totals per system (the cases every system ran on the model under test)", "",
           "| system | cases | mean recall | calls | prompt tok | completion tok | wall s | complete |",
           "|---|---:|---:|---:|---:|---:|---:|---:|"]
    model_cases = {"log-anomalies", "log-needle", "notes-180", "transcript-story",
                   "transcript-revised"}
    for system in ("rlm", "naive-fanout", "truncated-direct"):
        rs = [r for r in rows if r["system"] == system and r["case"] in model_cases]
        if not rs:
            continue
        rec = [r["recall"] for r in rs if r["recall"] is not None]
        md.append(f"| {system} | {len(rs)} | {_f(sum(rec) / len(rec) if rec else None)} | "
                  f"{sum(r['calls'] for r in rs):,} | {sum(r['prompt_tokens'] for r in rs):,} | "
                  f"{sum(r['completion_tokens'] for r in rs):,} | "
                  f"{sum(r['wall_s'] for r in rs):.0f} | {sum(r['complete'] for r in rs)}/{len(rs)} |")
    md.append("")
    md.append("Rows that reuse rlm's run are counted again here (they cost nothing extra).")
    md += ["", "## Notes per row", ""]
    for r in rows:
        if r["case"] == "context-assembly" or r["note"].startswith("same run"):
            continue
        a = " ".join(r["answer"].split("\n\n")[0].split())[:240]
        line = f"- {r['case']} / {r['system']}: " + (f"answer begins “{a}”" if a else "no answer")
        if not r["complete"] and "CAPPED" not in r["note"] and r["statement"]:
            st = r["statement"]
            i = st.find(" failed and were not read")
            part = st[max(0, i - 8):i + 250] if i >= 0 else st[:250]
            line += f". Coverage: “…{' '.join(part.split())}…”"
        md.append(line)
    if meta.get("workdir"):
        md = [m.replace(meta["workdir"].rstrip("/") + "/", "") for m in md]
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "RESULTS.md").write_text("\n".join(md) + "\n")
    (out_dir / "results.json").write_text(json.dumps(
        {"meta": meta, "rows": rows, "preservation": preserve,
         "preservation_total": {"numbers_ids": tot, "missing": miss}}, indent=2) + "\n")


# ------------------------------------------------------------------------------ main

def _loadavg() -> str:
    try:
        return "/".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "?"


def parse_args(argv=None):
    ap = argparse.ArgumentParser(prog="python -m evals.run", description=__doc__.split("\n")[0])
    ap.add_argument("--model", help="local (default) | openai:NAME | NAME with --base-url")
    ap.add_argument("--base-url", help="OpenAI-compatible server, e.g. http://127.0.0.1:8080/v1")
    ap.add_argument("--suite", help="comma-separated suites instead of the cases: sim (every "
                    "fixture path with simulated readers), sniah, oolong (evals/suites.py)")
    ap.add_argument("--cases", default=",".join(ALL_CASES),
                    help=f"comma-separated subset of: {', '.join(ALL_CASES)}")
    ap.add_argument("--embedded-all", action="store_true",
                    help="--suite sim --model local: also the transcript fan-outs, the audit and "
                    "mining with the embedded model (9-36 calls each: tens of minutes on 2 cores)")
    ap.add_argument("--quick", action="store_true",
                    help="smaller fixtures and caps (fewer window-sized calls; still minutes)")
    ap.add_argument("--log-lines", type=int, help="log fixture size (default 600,000; quick 20,000)")
    ap.add_argument("--transcript-lines", type=int, help="transcript size (default 600; quick 300)")
    ap.add_argument("--naive-max-calls", type=int,
                    help="cap (calls, retries included) for the naive fan-out where it has more "
                    "chunks than that (default 2; quick 1)")
    ap.add_argument("--buried-tokens", type=int,
                    help="size of the buried layout in the context-assembly case (2,500; 1,500)")
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per model request")
    ap.add_argument("--rerun-identical", action="store_true",
                    help="re-run baselines even when they would repeat rlm's exact calls")
    ap.add_argument("--use-profile", action="store_true",
                    help="let a saved `rlm calibrate` profile set the window")
    ap.add_argument("--out-dir", default=str(ROOT / "evals"), help="where RESULTS.md goes")
    ap.add_argument("--no-write", action="store_true", help="print the table only")
    ap.add_argument("--workdir", help="where fixtures are written and kept (default: a temp "
                    "dir, removed at the end)")
    return ap.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.suite:
        from evals.suites_main import main_suites

        return main_suites(args)
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    bad = [c for c in cases if c not in CASE_FUNCS]
    if bad:
        print(f"unknown case(s): {', '.join(bad)}; known: {', '.join(ALL_CASES)}", file=sys.stderr)
        return 2
    sizes = dict(QUICK if args.quick else FULL)
    for k in ("log_lines", "transcript_lines", "naive_max_calls"):
        if getattr(args, k) is not None:
            sizes[k] = getattr(args, k)
    args.naive_max_calls = sizes["naive_max_calls"]
    tmp = Path(tempfile.mkdtemp(prefix="rlm-eval-"))
    for env, sub in (("RLM_CACHE_DIR", "cache"), ("RLM_DATA_DIR", "data")):
        os.environ[env] = str(tmp / sub)
    if not args.use_profile:
        os.environ["RLM_CONFIG_DIR"] = str(tmp / "config")
    workdir = Path(args.workdir) if args.workdir else tmp / "fixtures"
    workdir.mkdir(parents=True, exist_ok=True)

    from rlm.errors import RlmError
    from rlm.models.registry import resolve_model

    try:
        model = resolve_model(args.model, args.base_url, timeout=args.timeout)
    except RlmError as e:
        shutil.rmtree(tmp, ignore_errors=True)
        print(f"evals: {e}", file=sys.stderr)
        return 2
    fx = Fixtures(workdir, sizes)
    load_before, t0 = _loadavg(), time.monotonic()
    rows: list[dict] = []
    preserve: list[dict] = []

    async def go():
        try:
            model.count_tokens("warm up")  # load the embedded model once, outside the timings
            for c in cases:
                t = time.monotonic()
                print(f"[{time.monotonic() - t0:6.0f}s] case {c} ...", file=sys.stderr, flush=True)
                new = await CASE_FUNCS[c](model, fx, args, preserve)
                rows.extend(new)
                print(f"[{time.monotonic() - t0:6.0f}s] case {c} done in {time.monotonic() - t:.0f}s",
                      file=sys.stderr, flush=True)
        finally:
            await model.aclose()

    try:
        anyio.run(go)
    except RlmError as e:
        print(f"evals: {e}", file=sys.stderr)
        return 2
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # fixtures (unless --workdir), records, cache
    wall = time.monotonic() - t0
    try:
        import llama_cpp

        llama_v = llama_cpp.__version__
    except Exception:  # noqa: BLE001
        llama_v = "not installed"
    sizes_note = (f"log fixture {sizes['log_lines']:,} lines, transcript {sizes['transcript_lines']:,} "
                  f"lines, notes 180 lines, naive fan-out capped at {sizes['naive_max_calls']} call(s) "
                  f"where it needs more, context assembly: transcript seed(s) {sizes['ca_seeds']}, "
                  f"buried layout ~{args.buried_tokens or sizes['buried_tokens']:,} tokens")
    cmd = "python -m evals.run" + (" --quick" if args.quick else "")
    if set(cases) != set(ALL_CASES):
        cmd += f" --cases {','.join(cases)}"
    meta = {"date": time.strftime("%Y-%m-%d %H:%M"), "model": model.name,
            "mode": "quick" if args.quick else "full", "sizes": sizes, "sizes_note": sizes_note,
            "cpus": os.cpu_count(), "platform": platform.platform(terse=True),
            "python": platform.python_version(), "llama_cpp": llama_v,
            "load_before": load_before, "load_after": _loadavg(), "wall_s": round(wall, 1),
            "command": cmd, "context_tokens": model.context_tokens, "workdir": str(workdir)}
    print(text_table(rows))
    tot = sum(p["total"] for p in preserve)
    miss = sum(p["missing"] for p in preserve)
    print(f"\nnumber/id preservation: {miss} of {tot} missing from the final findings"
          + (f" ({miss / tot:.0%})" if tot else " (no numbers/ids in verified map findings)"))
    print(f"total wall time {wall:.0f}s; load average {load_before} -> {meta['load_after']}")
    if not args.no_write:
        write_results(Path(args.out_dir), rows, meta, preserve)
        print(f"wrote {Path(args.out_dir) / 'RESULTS.md'} and results.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
