"""Benchmark for issue 22: profile a big log on the local executor and on Ray, in one run.

Writes `rlm fixture log` (default ~500 MB) to a temp folder, then profiles it (the template
count over shards, then the rules) in child processes, one per contender, so each peak RSS is
its own driver's: local (worker processes, one per core), Ray with a local instance of 1 CPU,
and Ray with 2 CPUs. Prints wall time, MB/s, the ratio to local, the driver's peak RSS, Ray's
start-up time (apart), each shard's own scan time and the driver's merge time, and whether the
candidates are the same as local's. Then projects a 10-node cluster from the measured per-shard
and merge costs (the arithmetic is printed; evals/RESULTS.md keeps a run).

    python evals/bench_executor.py [--lines 5900000] [--dir /tmp/x] [--keep] [--shard-mb 32] [--reps 2]

On a 2-core machine, Ray and local compete for the same 2 cores (and with the raylet, the GCS
and the object store): this shows Ray's overhead per shard and that results are equal, not
what many nodes give. The projection says what it assumes.
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

CHILD = """
import json, resource, sys, time
mode, workers, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
from rlm.corpus.profile import profile_log
from rlm.corpus.source import TextSource
from rlm.executor import LocalExecutor, using
t0 = time.perf_counter()
if mode == "ray":
    import ray
    from rlm.executor.ray_cluster import RayExecutor
    ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    ex = RayExecutor(workers=workers)
else:
    ex = LocalExecutor(workers=workers)
up = time.perf_counter() - t0
t = time.perf_counter()
with using(ex), TextSource.open(path) as src:
    p = profile_log(src)
wall = time.perf_counter() - t
me = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"up": up, "wall": wall, "rss_mb": me.ru_maxrss / 1024,
                  "shards": p.shards, "shard_s": p.scan_timing.get("shard_s", []),
                  "merge_s": p.scan_timing.get("merge_s", 0.0), "lines": p.lines,
                  "templates": p.templates_total, "candidates": p.candidates,
                  "per_node": ex.info().shards_per_node}))
if mode == "ray":
    ray.shutdown()
"""


def run(mode: str, workers: int, log: Path, shard_mb: float) -> dict:
    env = dict(os.environ, RLM_SHARD_MB=str(shard_mb))
    r = subprocess.run([sys.executable, "-c", CHILD, mode, str(workers), str(log)],
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        return {"error": (r.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(r.stdout.strip().splitlines()[-1])


def project(r: dict, mb: float, nodes: int = 10, cores: int = 2) -> list[str]:
    """Throughput of `nodes` nodes of `cores` cores from one run's per-shard and merge costs."""
    per_shard = sorted(r["shard_s"])[len(r["shard_s"]) // 2]  # median shard time
    shard_mb = mb / r["shards"]
    merge = r["merge_s"] / r["shards"]
    node_rate = cores * shard_mb / per_shard  # one node, every core scanning shards
    driver_rate = shard_mb / merge if merge > 0 else float("inf")  # merges are serial
    cluster = min(nodes * node_rate, driver_rate)
    return [
        f"measured: median shard {per_shard:.2f} s for {shard_mb:.1f} MB "
        f"({shard_mb / per_shard:.1f} MB/s a core), merge {merge * 1000:.1f} ms a shard on the driver",
        f"one node of {cores} cores: {node_rate:.0f} MB/s; the driver merges at most "
        f"{driver_rate:,.0f} MB/s",
        f"{nodes} nodes: min({nodes} x {node_rate:.0f}, {driver_rate:,.0f}) = {cluster:,.0f} MB/s "
        f"({cluster * 3600 / 1e6:.1f} TB an hour), assuming every node reads its shards at that "
        "speed from a shared file system (not measured here: the file system's bandwidth caps it)",
    ]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=5_900_000, help="~85 bytes a line: 5.9M ~ 500 MB")
    ap.add_argument("--dir", default=None)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--shard-mb", type=float, default=32.0)
    ap.add_argument("--reps", type=int, default=2, help="runs of each contender, alternating")
    a = ap.parse_args()
    d = Path(a.dir or tempfile.mkdtemp(prefix="rlm-bench-executor-"))
    log = d / "big.log"
    if not log.exists():
        subprocess.run([sys.executable, "-m", "rlm.cli", "fixture", "log", str(log), "--lines",
                        str(a.lines)], check=True, capture_output=True)
    mb = log.stat().st_size / 1e6
    print(f"log: {mb:,.1f} MB, shards of {a.shard_mb:g} MB; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'contender':<14} {'wall s':>7} {'MB/s':>7} {'x local':>8} {'driver RSS MB':>14} "
          f"{'start s':>8} {'shard s (med)':>14} {'MB/shard-s':>11} {'merge s':>8}  same candidates")
    contenders = (("local", "local", 2), ("ray 1 worker", "ray", 1), ("ray 2 workers", "ray", 2))
    best: dict[str, dict] = {}
    for rep in range(a.reps):  # alternating order: a load change hits every contender alike
        for label, mode, w in (contenders if rep % 2 == 0 else contenders[::-1]):
            r = run(mode, w, log, a.shard_mb)
            if "error" in r:
                print(f"{label:<14} failed: {r['error']}")
                continue
            if label not in best or r["wall"] < best[label]["wall"]:
                best[label] = r
    rows = best
    for label, _, _ in contenders:
        if label not in rows:
            continue
        r, base = rows[label], rows.get("local", rows[label])
        med = sorted(r["shard_s"])[len(r["shard_s"]) // 2] if r["shard_s"] else 0.0
        work = sum(r["shard_s"]) or float("nan")
        print(f"{label:<14} {r['wall']:>7.2f} {mb / r['wall']:>7.1f} "
              f"{base['wall'] / r['wall']:>8.2f} {r['rss_mb']:>14.0f} {r['up']:>8.2f} "
              f"{med:>14.2f} {mb / work:>11.1f} {r['merge_s']:>8.2f}  "
              f"{r['candidates'] == base['candidates']}")
    print(f"(best wall of {a.reps} alternating runs each; MB/shard-s: MB per second of shard "
          "work, what one core does whatever the parallelism)")
    for label in ("ray 2 workers", "local"):
        if label in rows and rows[label]["shard_s"]:
            print(f"projection from '{label}':")
            for line in project(rows[label], mb):
                print("  " + line)
            break
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    if not a.keep and not a.dir:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
