"""Peak memory of a run's Redactor against the number of distinct values it replaced (issue 21:
bounded memory): a benchmark, not a test. Each contender runs in a process of its own under
/usr/bin/time -v, and redacts 16 KB prompts of a generated sshd-like log, two new IPv4
addresses a line (evals.bench_redact.ip_dense_log's lines), made one prompt at a time so that
only the Redactor grows; then it restores every placeholder it gave, in a sample of prompts.

- `memory`: the default (rlm.redact.redactor.MEMORY_VALUES in memory, the rest on disk);
- `unbounded`: every placeholder in memory, as before session 9.

    python -m evals.bench_redactor_memory [--values 400000 1600000]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time


def _child(args: list[str]) -> tuple[int, float, str]:
    """Peak RSS (kB), wall seconds and the stdout of `python -c CHILD args` under time -v."""
    t0 = time.monotonic()
    r = subprocess.run(["/usr/bin/time", "-v", sys.executable, "-c", CHILD, *args],
                       capture_output=True, text=True)
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr)
    if r.returncode or not m:
        sys.exit(f"the child failed: {r.stderr[-600:]}")
    return int(m.group(1)), time.monotonic() - t0, r.stdout.strip()



CHILD = r"""
import random, sys, time
from rlm.redact.redactor import Redactor
values, cap = int(sys.argv[1]), sys.argv[2]
r = Redactor(memory_values=10**12 if cap == "unbounded" else None)
rnd = random.Random(7)
lines, kept, t = values // 2, [], time.process_time()
for start in range(0, lines, 150):  # ~16 KB a prompt
    text = "".join(
        f"Dec 10 06:00:00 gw sshd[{i}]: Accepted publickey for deploy from "
        f"{'.'.join(str(rnd.randrange(1, 255)) for _ in range(4))} port 22 ssh2 via "
        f"{'.'.join(str(rnd.randrange(1, 255)) for _ in range(4))}\n"
        for i in range(start, min(lines, start + 150)))
    out = r.redact(text)
    if start % 30_000 == 0:
        kept.append((text, out))
ok = all(r.restore(out) == text for text, out in kept)
spill = r._spill.held if r._spill is not None else 0
print(f"{r.counts().get('IP', 0)} {time.process_time() - t:.2f} {ok} {spill}")
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--values", type=int, nargs="+", default=[400_000, 1_600_000])
    a = ap.parse_args()
    print(f"machine load (1 min): {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    base, _, _ = _child(["2", "memory"])
    print(f"   a process that redacts one line: {base / 1024:.0f} MB peak RSS")
    for n in a.values:
        for cap in ("memory", "unbounded"):
            kb, wall, out = _child([str(n), cap])
            given, cpu, ok, disk = out.split()
            print(f"   {int(given):>9,} addresses, {cap:9s}: peak RSS {kb / 1024:6.0f} MB "
                  f"({(kb - base) * 1024 / int(given):5.0f} bytes an address), on disk "
                  f"{int(disk) / 2**20:5.0f} MiB, CPU {float(cpu):5.1f} s, wall {wall:5.1f} s, "
                  f"sampled prompts restored: {ok}", flush=True)
    print(f"machine load (1 min) at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
