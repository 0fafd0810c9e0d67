"""Benchmark: redaction of logs with a new secret on every line (issue 21, item 4).

An access log whose every request carries its own token (`?access_token=...`, as many web
logs do), and an application log with a JWT in every request's Authorization header: each
prompt of a run is searched for every secret found before it, so with one `str.find` a secret
(every session before 7) the run grows quadratically. Redacted as a fan-out sends it (prompts
of 16 KB built and scanned a batch ahead), at 5,000 to 40,000 lines, three ways in the same
run, interleaved; CPU seconds, best of --rounds:

- now: the run's secrets in a suffix index (rlm.redact.recurring, session 8);
- `--previous REV` (default d06fb99, session 8's end): the whole redaction package as it was
  then (its suffix index, and every secret on a line judged three times);
- str.find: now, with every secret found by `str.find` (the index never built).

    python -m evals.bench_recurring [--rounds 2] [--previous REV]
"""

from __future__ import annotations

import argparse
import os
import random
import string
import sys
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


def jwt_log(lines: int) -> str:
    import base64
    import json

    rnd = random.Random(4)

    def b64(d: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(d).encode()).rstrip(b"=").decode()

    out = []
    for i in range(lines):
        sig = "".join(rnd.choice(string.ascii_letters + string.digits + "-_") for _ in range(43))
        tok = (b64({"alg": "HS256", "typ": "JWT"}) + "." + b64({"sub": str(rnd.randrange(10**6)),
                                                               "iat": 1700000000 + i}) + "." + sig)
        out.append(f"2026-03-01 12:{i // 60 % 60:02d}:{i % 60:02d},{i % 1000:03d} DEBUG "
                   f"[http-nio-8080-exec-{i % 10}] o.a.c.Filter - GET /api/orders/{i} headers: "
                   f"Authorization: Bearer {tok}")
    return "\n".join(out) + "\n"


def _fanout(chunks: list[str], package) -> None:
    """What a fan-out does (evals.bench_redact._redact_fanout), with `package`'s RedactingModel
    and Redactor (rlm.redact now, or the previous one)."""
    from evals.bench_redact import _Silent
    from rlm.engine.ahead import Ahead

    model = package.model.RedactingModel(_Silent(), package.redactor.Redactor())
    ahead = Ahead(model, lambda i: [{"role": "user", "content": chunks[i]}], key=str)
    for i in ahead.items(range(len(chunks))):
        model.redact_now(ahead.messages(i))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--previous", default="d06fb99")
    a = ap.parse_args()
    import importlib
    import types

    from evals.bench_redact import _chunks, previous_module
    from rlm.redact import recurring
    from rlm.redact.detect import detect

    print(f"machine load (1 min): {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    now = types.SimpleNamespace(model=importlib.import_module("rlm.redact.model"),
                                redactor=importlib.import_module("rlm.redact.redactor"))
    prev = None
    if previous_module(a.previous) is not None:
        prev = types.SimpleNamespace(model=importlib.import_module("redact_previous.model"),
                                     redactor=importlib.import_module("redact_previous.redactor"))
        sys.modules["redact_previous.detect"].detect("compile its rules once")
    detect("compile the rules once")
    limit = recurring.FIND_MAX
    for name, make in (("token", access_log), ("JWT", jwt_log)):
        for lines in (5_000, 10_000, 20_000, 40_000):
            text = make(lines)
            chunks = _chunks(text, 16_000)
            ways = {"now": now, "previous": prev, "str.find": now}
            best = {k: float("inf") for k, v in ways.items() if v is not None}
            for _ in range(a.rounds):
                for way in best:
                    recurring.FIND_MAX = 1 << 62 if way == "str.find" else limit
                    c = time.process_time()
                    _fanout(chunks, ways[way])
                    best[way] = min(best[way], time.process_time() - c)
            recurring.FIND_MAX = limit
            mb = len(text) / 1e6
            line = (f"   {name:5s} {lines:6,} lines, {mb:4.1f} MB: now {best['now']:6.2f} s "
                    f"({mb / best['now']:.2f} MB/s, {best['now'] / lines * 1000:.3f} s per 1,000 "
                    f"lines)")
            if "previous" in best:
                line += (f"; at {a.previous} {best['previous']:6.2f} s "
                         f"({best['previous'] / best['now']:.2f}x the time)")
            line += (f"; str.find {best['str.find']:6.2f} s "
                     f"({best['str.find'] / best['now']:.2f}x the time)")
            print(line, flush=True)
    print(f"machine load (1 min) at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
