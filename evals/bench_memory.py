"""Peak memory of `rlm ask` against the number of lines (issue 21, item 8): a benchmark, not a
test. Files of short lines ("a\\n") at two sizes; each run under /usr/bin/time -v, the peak RSS
read from its report. What it shows: how much RSS one more line costs. The per-line index of
before (one 8-byte offset a line) cost 8 bytes a line: 4.3 GB for 537M lines.

    python evals/bench_memory.py [--lines 20000000 80000000] [--question "how many lines mention a?"]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def peak_rss_kb(cmd: list[str]) -> tuple[int, float, int]:
    t0 = time.monotonic()
    r = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True)
    wall = time.monotonic() - t0
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr)
    if not m:
        sys.exit(f"no RSS in /usr/bin/time's report: {r.stderr[-300:]}")
    return int(m.group(1)), wall, r.returncode


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, nargs=2, default=[20_000_000, 80_000_000])
    ap.add_argument("--question", default="how many lines mention a?")
    a = ap.parse_args()
    if not Path("/usr/bin/time").exists():
        sys.exit("needs /usr/bin/time (Debian package 'time')")
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for n in a.lines:
            p = Path(d) / f"short-{n}.log"
            with p.open("wb") as fh:  # 2 bytes a line
                block = b"a\n" * 1_000_000
                for _ in range(n // 1_000_000):
                    fh.write(block)
            cmd = [sys.executable, "-m", "rlm.cli", "ask", str(p), a.question, "--model", "none",
                   "--json"]
            kb, wall, rc = peak_rss_kb(cmd)
            rows.append((n, p.stat().st_size, kb, wall, rc))
            p.unlink()
    load = os.getloadavg()[0]
    print(f"load {load:.1f}; question {a.question!r}")
    print("| lines | bytes | peak RSS | wall s | exit | a per-line index alone would take |")
    print("|---:|---:|---:|---:|---:|---:|")
    for n, b, kb, wall, rc in rows:
        print(f"| {n:,} | {b:,} | {kb / 1024:,.0f} MB | {wall:.1f} | {rc} | {n * 8 / 2**20:,.0f} MB |")
    (n1, _, k1, _, _), (n2, _, k2, _, _) = rows
    per_line = (k2 - k1) * 1024 / (n2 - n1)
    print(f"RSS per extra line: {per_line:.2f} bytes (a per-line index: 8 bytes; the sampled one: "
          f"{8 / 64:.3f} bytes)")


if __name__ == "__main__":
    main()
