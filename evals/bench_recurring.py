"""Benchmark: redaction of a log with a new secret on every line (issue 21, item 4).

An access log whose every request carries its own token (`?access_token=...`, as many web
logs do): each prompt of a run is searched for every secret found before it, so with one
`str.find` a secret (rlm.redact.recurring without Hyperscan, and every session before 7) the
run grows quadratically. Redacted as a fan-out sends it (prompts of 16 KB built and scanned a
batch ahead), at 5,000 to 40,000 lines, with the secrets in Hyperscan databases and with
`str.find` alone, in the same run; CPU seconds, best of --rounds.

    python -m evals.bench_recurring [--rounds 2]
"""

from __future__ import annotations

import argparse
import os
import random
import string
import time


def access_log(lines: int) -> str:
    rnd = random.Random(3)
    out = []
    for i in range(lines):
        tok = "".join(rnd.choice(string.ascii_letters + string.digits) for _ in range(32))
        out.append(f'10.0.{i % 250}.{i % 200 + 1} - - [01/Mar/2026:12:{i // 60 % 60:02d}:'
                   f'{i % 60:02d} +0000] "GET /api/v1/items?id={i}&access_token={tok} '
                   f'HTTP/1.1" 200 512')
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    from evals.bench_redact import _chunks, _redact_fanout
    from rlm.redact import recurring
    from rlm.redact.detect import detect

    print(f"machine load (1 min): {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    detect("compile the rules once")
    real = recurring._hyperscan
    for lines in (5_000, 10_000, 20_000, 40_000):
        text = access_log(lines)
        chunks = _chunks(text, 16_000)
        best = {"databases": float("inf"), "str.find": float("inf")}
        for _ in range(a.rounds):
            for way in best:
                recurring._hyperscan = real if way == "databases" else (lambda: None)
                c = time.process_time()
                _redact_fanout(chunks)
                best[way] = min(best[way], time.process_time() - c)
        recurring._hyperscan = real
        mb = len(text) / 1e6
        print(f"   {lines:6,} lines, {mb:4.1f} MB: databases {best['databases']:6.2f} s "
              f"({mb / best['databases']:.2f} MB/s), str.find {best['str.find']:6.2f} s "
              f"({best['str.find'] / best['databases']:.2f}x the time); per 1,000 lines "
              f"{best['databases'] / lines * 1000:.3f} s and {best['str.find'] / lines * 1000:.3f} s")
    print(f"machine load (1 min) at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
