"""The code-only audit's analyzers on real repositories: precision of sampled findings, and the
audit's wall time against `ruff check` alone on the same tree, as a ratio in one run.

Repositories: sdists of httpx, requests and click (`pip download --no-binary :all: --no-deps`,
into --src; downloaded when missing). Per repository:

- 30 findings sampled (seeded) from the analyzers (ruff and vulture) in `rlm audit --json`;
  each checked by a script (evals/audit_checks.py: does what the rule says hold at the cited
  line?) and by a person (evals/data/audit_verdicts.toml: is it a real problem for the reader?
  written by hand after reading each line; a sample with no verdict is printed as such);
- wall time (median of --repeat runs, whole CLI process) of `rlm audit REPO --model none --json`
  and of `ruff check` with the same rules over the same tree.

    python -m evals.bench_audit_views [--src DIR] [--repeat 3] [--sample 30]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tarfile
import time
import tomllib
from pathlib import Path

from evals.audit_checks import check
from rlm.repo.audit.analyzed import promoted
from rlm.codeview import severity
from rlm.codeview.shapes import AnalyzerFinding
from rlm.codeview.tools import ruff_binary

REPOS = ("httpx", "requests", "click")
VERDICTS = Path(__file__).resolve().parent / "data" / "audit_verdicts.toml"


def fetch(src: Path) -> dict[str, Path]:
    src.mkdir(parents=True, exist_ok=True)
    if not all(any(src.glob(f"{r}-*.tar.gz")) for r in REPOS):
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-binary", ":all:",
                        "--no-deps", "-d", str(src), *REPOS], check=True)
    out = {}
    for r in REPOS:
        tgz = max(src.glob(f"{r}-*.tar.gz"))
        folder = src / tgz.name.removesuffix(".tar.gz")
        if not folder.is_dir():
            with tarfile.open(tgz) as t:
                t.extractall(src, filter="data")
        out[r] = folder
    return out


def timed(argv: list[str]) -> tuple[float, subprocess.CompletedProcess]:
    env = {k: v for k, v in os.environ.items() if k not in ("RLM_MODEL", "RLM_BASE_URL")}
    t0 = time.perf_counter()
    p = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    return time.perf_counter() - t0, p


def measure(folder: Path, repeat: int) -> tuple[dict, float, float]:
    select, ignore = severity.selected()
    ruff = [ruff_binary(), "check", "--isolated", "--no-cache", "--exit-zero", "--output-format",
            "json", "--select", ",".join(select), "--ignore", ",".join(ignore), str(folder)]
    audit = [sys.executable, "-m", "rlm.cli", "audit", str(folder), "--model", "none", "--json"]
    t_ruff, t_audit, rep = [], [], {}
    for _ in range(repeat):  # interleaved, so both see the same machine load
        t, _p = timed(ruff)
        t_ruff.append(t)
        t, p = timed(audit)
        t_audit.append(t)
        rep = json.loads(p.stdout)
    return rep, statistics.median(t_ruff), statistics.median(t_audit)


def sample(rep: dict, n: int, seed: str) -> list[dict]:
    v = rep["views"]
    pool = v["analyzers"]["findings"] + v["dead_code"]["findings"]
    return sorted(random.Random(seed).sample(pool, min(n, len(pool))),
                  key=lambda f: (f["tool"], f["rule"], f["path"], f["line"]))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", default=str(Path.home() / ".cache" / "rlm-evals" / "sdists"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sample", type=int, default=30)
    ap.add_argument("--rows", action="store_true", help="print every sampled finding")
    a = ap.parse_args()
    verdicts = tomllib.loads(VERDICTS.read_text("utf-8")) if VERDICTS.is_file() else {}
    load0 = os.getloadavg()
    print("| repository | py files | findings (ruff / vulture) | sampled | rule holds (script) "
          "| real problem (by hand) | audit wall | ruff wall | audit / ruff | views: ruff, "
          "radon, vulture s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    rows, promoted_rows = [], []
    for folder in fetch(Path(a.src)).values():
        rep, t_ruff, t_audit = measure(folder, a.repeat)
        v = rep["views"]
        picked = sample(rep, a.sample, folder.name)
        held = [check(folder, f) for f in picked]
        hand = [verdicts.get(folder.name, {}).get(f"{f['path']}:{f['line']}:{f['rule']}")
                for f in picked]
        judged = [h for h in hand if h is not None]
        tools = {t["name"]: t["wall_s"] for t in v["tools"]}
        nfiles = len(v["graph"]["nodes"])
        print(f"| {folder.name} | {nfiles} | {len(v['analyzers']['findings'])} / "
              f"{len(v['dead_code']['findings'])} | {len(picked)} | "
              f"{sum(h is True for h in held)}/{sum(h is not None for h in held)} | "
              f"{sum(bool(h['real']) for h in judged)}/{len(judged)} | {t_audit:.2f} s | "
              f"{t_ruff:.2f} s | {t_audit / t_ruff:.1f}× | {tools.get('ruff', 0):.2f}, "
              f"{tools.get('radon', 0):.2f}, {tools.get('vulture', 0):.2f} |")
        rows += [(folder.name, f, h, d) for f, h, d in zip(picked, held, hand)]
        risks = [f for f in v["analyzers"]["findings"] if promoted(AnalyzerFinding(**f))]
        judged_risks = [verdicts.get(folder.name, {}).get(f"{f['path']}:{f['line']}:{f['rule']}")
                        for f in risks]
        promoted_rows.append(f"{folder.name}: {len(risks)} promoted to the report's risks, "
                             f"{sum(bool(j and j['real']) for j in judged_risks)} real of "
                             f"{sum(j is not None for j in judged_risks)} judged")
    print(f"\nload average {load0[0]:.1f} before, {os.getloadavg()[0]:.1f} after; "
          f"{os.cpu_count()} cores; median of {a.repeat} interleaved runs")
    print("\n".join(promoted_rows))
    if a.rows:
        for repo, f, h, d in rows:
            print(f"{repo} | {f['tool']} {f['rule']} {f['severity']}/{f['confidence']} | "
                  f"{f['path']}:{f['line']} | {f['message'][:90]} | script: {h} | hand: "
                  f"{'-' if d is None else d['real']} {'' if d is None else d['why']}")


if __name__ == "__main__":
    main()
