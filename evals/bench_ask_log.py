"""Benchmark for issue 2: `rlm ask big.log "anomalies?"` on the 600k-line fixture.

Prints wall time, tokens, needle recall (scored by code against the answer key), whether the
session story came out as one ordered group, and the anchored (grep) question — next to the
targets (< 60 s, < 10,000 tokens) and the reference costs from the brief. Also measures what
the embedded model adds over code alone: its labels per group against the expected labels.

    python evals/bench_ask_log.py [--lines 600000] [--model local] [--base-url URL]
"""

from __future__ import annotations

import argparse
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=600_000)
    ap.add_argument("--model", default=None)
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
    extra = (["--model", a.model] if a.model else []) + (["--base-url", a.base_url] if a.base_url else [])

    rep, wall, rc = run_cli(["ask", str(log), "anomalies?", *extra])
    cited = {f["source"]["line_start"] for f in rep["findings"] if f["verified"]}
    needles = key["needles"]
    found = [n for n in needles if n["line"] in cited]
    tokens = rep["usage"]["prompt_tokens"] + rep["usage"]["completion_tokens"]
    session_lines = [n["line"] for n in needles if n["kind"] == "session"]
    story = [g for g in rep["groups"] if g["kind"] == "identifier" and g["lines"] == session_lines]
    extra_findings = len(cited - {n["line"] for n in needles})
    # what the model adds: its labels per group against what a person would call them
    kind_of = {n["line"]: n["kind"] for n in needles}
    label_ok = label_total = 0
    for g in rep["groups"]:
        kinds = {kind_of.get(ln) for ln in g["lines"]} - {None}
        if len(kinds) == 1 and g.get("label"):
            label_total += 1
            label_ok += g["label"] in EXPECTED_LABELS[kinds.pop()]
    summaries = sum(1 for g in rep["groups"] if g.get("claim"))

    txn = key["txn_ids"][0]
    grep_rep, grep_wall, _ = run_cli(["ask", str(log), f"what happened to {txn}?", *extra])
    panic_line = next(n["line"] for n in needles if n["id"] == txn)
    grep_ok = [f["source"]["line_start"] for f in grep_rep["findings"]] == [panic_line]
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024

    print(f"fixture: {key['lines']:,} lines, {key['bytes'] / 1e6:.1f} MB, written in {gen_s:.1f}s")
    print(f"model: {rep['model']}   strategy: {rep['strategy']}   exit: {rc}")
    rows = [
        ("needle recall (verified, exact line)", f"{len(found)}/{len(needles)}", "12/12"),
        ("findings that are not needles", str(extra_findings), "0"),
        ("session story as one ordered group", "yes" if story else "no", "yes"),
        ("wall time (s)", f"{wall:.1f}", "< 60"),
        ("model tokens (prompt+completion)", f"{tokens:,}", "< 10,000"),
        ("model calls", str(rep["usage"]["calls"]), ""),
        ("coverage complete", str(rep["coverage"]["complete"]), "True"),
        ("grep question: strategy / right line / calls",
         f"{grep_rep['strategy']} / {grep_ok} / {grep_rep['usage']['calls']}", "grep / True / 1"),
        ("grep wall time (s)", f"{grep_wall:.1f}", ""),
        ("model labels matching the needle kind", f"{label_ok}/{label_total}", ""),
        ("groups with a usable model summary", f"{summaries}/{len(rep['groups'])}", ""),
        ("peak RSS of the runs (MB)", f"{peak_mb:.0f}", ""),
    ]
    w = max(len(r[0]) for r in rows)
    print(f"{'measure':<{w}}  {'got':>22}  target")
    for name, got, target in rows:
        print(f"{name:<{w}}  {got:>22}  {target}")
    for what, ref in REFERENCE.items():
        print(f"tokens vs {what} ({ref:,}): {tokens / ref:.3%}")
    print("coverage:", rep["coverage"]["statement"])


if __name__ == "__main__":
    os.environ.setdefault("RLM_CACHE_DIR", tempfile.mkdtemp(prefix="rlm-bench-cache-"))
    main()
