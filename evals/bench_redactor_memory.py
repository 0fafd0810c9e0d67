"""Peak memory of a run's Redactor against the number of distinct values it replaced (issue 21:
bounded memory): a benchmark, not a test. Each contender runs in a process of its own under
/usr/bin/time -v, and redacts 16 KB prompts of a generated log made one prompt at a time, so
that only the Redactor grows: an sshd-like log of two new IPv4 addresses a line (as
evals.bench_redact.ip_dense_log), or an access log with a new token a line (as
evals.bench_recurring.access_log); then it restores a sample of the prompts it redacted.

- `memory`: the defaults (rlm.redact.redactor.MEMORY_VALUES placeholders and
  rlm.redact.recurring.MEMORY_SECRETS secrets in memory, the rest on disk);
- `unbounded`: everything in memory, as before session 9.

    python -m evals.bench_redactor_memory [--values 400000 1600000] [--kinds addresses tokens]
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
import random, string, sys, time
from rlm.redact import recurring
from rlm.redact.redactor import Redactor
values, cap, kind = int(sys.argv[1]), sys.argv[2], sys.argv[3]
if cap == "unbounded":
    recurring.MEMORY_SECRETS = 10**12
r = Redactor(memory_values=10**12 if cap == "unbounded" else None)
rnd = random.Random(7)
ip = lambda: ".".join(str(rnd.randrange(1, 255)) for _ in range(4))
tok = lambda: "".join(rnd.choices(string.ascii_letters + string.digits, k=32))
line = (lambda i: f"Dec 10 06:00:00 gw sshd[{i}]: Accepted publickey for deploy from {ip()} "
        f"port 22 ssh2 via {ip()}\n") if kind == "addresses" else (
        lambda i: f'10.0.0.1 - - [01/Mar/2026:12:00:00 +0000] "GET /a?id={i}&access_token='
        f'{tok()} HTTP/1.1" 200 512\n')
each = 2 if kind == "addresses" else 1
lines, kept, t = values // each, [], time.process_time()
for start in range(0, lines, 150):  # ~16 KB a prompt
    text = "".join(line(i) for i in range(start, min(lines, start + 150)))
    out = r.redact(text)
    if start % 30_000 == 0:
        kept.append((text, out))
ok = all(r.restore(out) == text for text, out in kept)
disk = sum(s.held for s in (r._spill, r._known._index and r._known._index.disk) if s)
given = r.counts().get("IP" if kind == "addresses" else "SECRET", 0)
print(f"{given} {time.process_time() - t:.2f} {ok} {disk}")
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--values", type=int, nargs="+", default=[400_000, 1_600_000])
    ap.add_argument("--kinds", nargs="+", default=["addresses", "tokens"])
    a = ap.parse_args()
    print(f"machine load (1 min): {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    base, _, _ = _child(["2", "memory", "addresses"])
    print(f"   a process that redacts one line: {base / 1024:.0f} MB peak RSS")
    for kind in a.kinds:
        for n in a.values:
            for cap in ("memory", "unbounded"):
                kb, wall, out = _child([str(n), cap, kind])
                _report(kind, cap, kb, base, wall, out)
    print(f"machine load (1 min) at the end: {os.getloadavg()[0]:.2f}")


def _report(kind: str, cap: str, kb: int, base: int, wall: float, out: str) -> None:
    given, cpu, ok, disk = out.split()
    print(f"   {int(given):>9,} {kind}, {cap:9s}: peak RSS {kb / 1024:6.0f} MB "
          f"({(kb - base) * 1024 / int(given):5.0f} bytes a value), on disk "
          f"{int(disk) / 2**20:5.0f} MiB, CPU {float(cpu):5.1f} s, wall {wall:5.1f} s, "
          f"sampled prompts restored: {ok}", flush=True)


if __name__ == "__main__":
    main()
