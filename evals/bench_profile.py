"""Benchmark for issue 10: profile throughput and peak memory on a big fixture log.

Writes `rlm fixture log` to a temp folder (default ~500 MB), then in the same run measures
`grep -c ''` (the disk-speed reference), rlm's profiler (numpy mask + C-level counting), and a
Polars pipeline (read_csv -> str.replace_all with the same mask -> group_by) when Polars is
installed. Each contender runs in its own child process so its peak RSS is its own. Prints
MB/s, the ratio to `grep -c`, CPU seconds (MB per CPU-second is what a loaded machine
cannot hide), peak RSS (the largest of the process and its workers), and whether the candidates are exactly the fixture's
12 needles.

    python -m evals.bench_profile [--lines 5900000] [--dir /tmp/x] [--keep] [--ask]

--baseline DIR also profiles with the rlm package found in DIR (e.g. `git archive main rlm |
tar -x -C DIR`), alternating with this checkout --reps times, and prints the ratio of MB per
CPU-second (after / before): a before/after comparison in the same run, under the same load.

--ask also times `rlm ask LOG "anomalies?" --model none --json` end to end (the issue's target
on a 1 GB log: under 15 s; use --lines 11800000 for ~1 GB), with the needles it cites; with
--baseline, the baseline's `rlm ask` and this checkout's alternate --reps times.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = {
    "rlm": """
import json, resource, sys, time
from rlm.corpus.profile import profile_log
from rlm.corpus.source import TextSource
t = time.perf_counter()
with TextSource.open(sys.argv[1]) as src:
    p = profile_log(src)
wall = time.perf_counter() - t
me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall": wall, "rss_mb": max([me.ru_maxrss / 1024] + [w["rss_mb"] for w in p.workers]),
                  "cpu": me.ru_utime + me.ru_stime + sum(w["cpu_s"] for w in p.workers),
                  "lines": p.lines, "templates": p.templates_total, "candidates": p.candidates}))
""",
    "polars": """
import json, resource, sys, time
import polars as pl
PAT = r"(?-u)[A-Za-z0-9_.:+\\-]*[0-9][A-Za-z0-9_.:+\\-]*|(?-u:\\b)[0-9a-fA-F]{8,}(?-u:\\b)"
t = time.perf_counter()
df = (pl.scan_csv(sys.argv[1], has_header=False, separator="\\x01", quote_char=None,
                  new_columns=["l"], encoding="utf8-lossy")
      .with_row_index("i", offset=1)
      .with_columns(pl.col("l").str.replace_all(PAT, "#"))
      .group_by("l").agg(pl.len().alias("n"), pl.col("i").head(20))
      .collect(engine="streaming"))
rare = df.filter(pl.col("n") <= 5)
cands = sorted(x for xs in rare["i"].to_list() for x in xs)
wall = time.perf_counter() - t
me = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"wall": wall, "rss_mb": me.ru_maxrss / 1024, "cpu": me.ru_utime + me.ru_stime,
                  "lines": int(df["n"].sum()), "templates": df.height, "candidates": cands}))
""",
}


def run_child(name: str, path: Path, pythonpath: str | None = None) -> dict:
    env = dict(os.environ, PYTHONPATH=pythonpath) if pythonpath else None
    r = subprocess.run([sys.executable, "-c", CHILD[name], str(path)], capture_output=True,
                       text=True, env=env, cwd=pythonpath)
    if r.returncode != 0:
        return {"error": (r.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(r.stdout)


def ask_code_only(log: Path, needles: list[int], mb: float, grep_s: float,
                  pythonpath: str | None = None, label: str = "rlm") -> float | None:
    """Time `rlm ask LOG "anomalies?" --model none` end to end (with `pythonpath`: the rlm
    package found there, run from that folder); returns the wall seconds."""
    import resource

    env = dict(os.environ, PYTHONPATH=pythonpath) if pythonpath else None
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "rlm.cli", "ask", str(log), "anomalies?",
                        "--model", "none", "--json", "--no-cache"], capture_output=True, text=True,
                       env=env, cwd=pythonpath)
    wall = time.perf_counter() - t
    if r.returncode not in (0, 3):
        print(f"{label} ask failed ({r.returncode}): {r.stderr.strip()[-200:]}")
        return None
    rep = json.loads(r.stdout)
    cited = sorted(f["source"]["line_start"] for f in rep["findings"])
    cited_needles = sorted(set(cited) & set(needles))
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"{label} ask --model none 'anomalies?': {wall:.2f}s end to end ({mb / wall:.0f} MB/s, "
          f"x grep -c {grep_s / wall:.3f}; target < 15 s on 1 GB), strategy {rep['strategy']}, "
          f"{rep['usage']['calls']} model calls, cites all 12 needles: "
          f"{cited_needles == needles}, peak RSS of the CLI processes so far {rss:.0f} MB "
          "(the 2 workers are separate processes)")
    return wall


def ask_before_after(log: Path, needles: list[int], mb: float, grep_s: float, base: str,
                     reps: int) -> None:
    """`rlm ask` end to end with the baseline package and this checkout, alternating."""
    walls: dict[str, list[float]] = {"rlm@base": [], "rlm": []}
    for _ in range(reps):
        for label, path in (("rlm@base", base), ("rlm", None)):
            w = ask_code_only(log, needles, mb, grep_s, path, label)
            if w is not None:
                walls[label].append(w)
    if walls["rlm"] and walls["rlm@base"]:
        a, b = min(walls["rlm"]), min(walls["rlm@base"])
        print(f"rlm ask end to end, best of {reps}: after {a:.2f}s, before {b:.2f}s, "
              f"after / before {a / b:.3f} (below 1: faster)")


def grep_count(path: Path) -> float:
    t = time.perf_counter()
    subprocess.run(["grep", "-c", "", str(path)], check=True, capture_output=True)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=5_900_000, help="~85 bytes a line: 5.9M ~ 500 MB")
    ap.add_argument("--dir", default=None)
    ap.add_argument("--keep", action="store_true", help="keep the fixture")
    ap.add_argument("--skip-polars", action="store_true")
    ap.add_argument("--ask", action="store_true", help="also time rlm ask, code only")
    ap.add_argument("--baseline", default=None, help="a folder holding the rlm package to compare")
    ap.add_argument("--reps", type=int, default=1, help="with --baseline: runs of each, alternating")
    a = ap.parse_args()
    d = Path(a.dir or tempfile.mkdtemp(prefix="rlm-bench-profile-"))
    log = d / "big.log"
    if not log.exists():
        t = time.monotonic()
        subprocess.run([sys.executable, "-m", "rlm.cli", "fixture", "log", str(log), "--lines",
                        str(a.lines)], check=True, capture_output=True)
        print(f"fixture written in {time.monotonic() - t:.1f}s")
    key = json.loads(Path(f"{log}.truth.json").read_text())
    needles = [n["line"] for n in key["needles"]]
    mb = log.stat().st_size / 1e6
    print(f"fixture: {key['lines']:,} lines, {mb:,.1f} MB; load average {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} cores (above the core count, other processes share the CPU)")
    grep_cold = grep_count(log)  # first touch may read from disk; the reference is warm
    grep_s = grep_count(log)
    if a.ask and a.baseline:  # before/after of the whole command, alternating
        ask_before_after(log, needles, mb, grep_s, a.baseline, a.reps)
    elif a.ask:  # first, so that the children's peak RSS so far is grep's and this run's
        ask_code_only(log, needles, mb, grep_s)
    print(f"{'contender':<10} {'wall s':>8} {'MB/s':>9} {'x grep -c':>10} {'CPU s':>7} "
          f"{'MB/CPU-s':>9} {'peak RSS MB':>12} {'templates':>10}  candidates == 12 needles")
    print(f"{'grep -c':<10} {grep_s:>8.2f} {mb / grep_s:>9.1f} {1.0:>10.3f} {'':>7} {'':>9} "
          f"{'':>12} {'':>10}  (cold {grep_cold:.2f}s)")
    names = ["rlm"]
    try:
        import polars  # noqa: F401
        names += [] if a.skip_polars else ["polars"]
    except ImportError:
        print("polars not installed: its row is skipped")
    runs = [(n, n, None) for n in names]
    if a.baseline:  # before/after, alternating so that load changes hit both alike
        runs = [x for _ in range(a.reps) for x in (("rlm@base", "rlm", a.baseline),
                                                    ("rlm", "rlm", None))]
        runs += [(n, n, None) for n in names if n != "rlm"]
    per_cpu: dict[str, list[float]] = {}
    for label, name, pythonpath in runs:
        r = run_child(name, log, pythonpath)
        if "error" in r:
            print(f"{label:<10} failed: {r['error']}")
            continue
        ok = r["candidates"] == needles
        per_cpu.setdefault(label, []).append(mb / r["cpu"])
        print(f"{label:<10} {r['wall']:>8.2f} {mb / r['wall']:>9.1f} {grep_s / r['wall']:>10.3f} "
              f"{r['cpu']:>7.1f} {mb / r['cpu']:>9.1f} {r['rss_mb']:>12.0f} {r['templates']:>10}  {ok}")
    if a.baseline and per_cpu.get("rlm") and per_cpu.get("rlm@base"):
        after, before = max(per_cpu["rlm"]), max(per_cpu["rlm@base"])
        print(f"MB per CPU-second, best of {a.reps}: after {after:.1f}, before {before:.1f}, "
              f"ratio {after / before:.3f}")
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    if not a.keep and not a.dir:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
