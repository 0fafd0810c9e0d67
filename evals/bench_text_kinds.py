"""Benchmark: redaction's speed over the kinds of text a user points rlm at (issue 21, item 4).

Each kind of text has its own shapes, and one of them can send every line down a slow path: an
access log's time zone ('+0000') read as the start of a phone number made redaction of one run
at 7 MB/s, where LogHub's logs ran at 90. So every kind this machine has is timed, next to one
pass of a single compiled regex (`re.findall(r"\\d+")`, the machine's reference) over the same
text in the same run, and next to the detector at `--previous REV` (default 95ec0e9, session 7's
end):

- real text nobody here wrote: Debian changelogs and man pages, the Python standard library,
  the packages installed beside rlm, HTML documentation, JSON files, the dpkg status file, C
  headers, Node.js modules, /var/log, the 16 LogHub logs;
- generated (seeded) where the machine has none: an Apache access log, JSON-lines application
  logs, Kubernetes (klog) logs.

MB/s of CPU on one core, best of --rounds, for `detect` over the whole text and for prompts of
16 KB as a fan-out sends them (built and scanned a batch ahead).

    python -m evals.bench_text_kinds [--rounds 3] [--limit 4000000] [--previous REV]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import re
import sysconfig
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _collect(paths, limit: int, gz: bool = False) -> str:
    parts, n = [], 0
    for p in sorted(paths):
        if n > limit:
            break
        try:
            raw = gzip.open(p).read(1_000_000) if gz else p.read_bytes()[:1_000_000]
        except (OSError, EOFError):
            continue
        if b"\x00" in raw[:4096]:
            continue
        parts.append(raw.decode("utf-8", "replace"))
        n += len(parts[-1])
    return "".join(parts)


def real_texts(limit: int, loghub: Path) -> dict[str, str]:
    purelib = Path(sysconfig.get_paths()["purelib"])
    kinds = {
        "Debian changelogs": (Path("/usr/share/doc").rglob("changelog*.gz"), True),
        "man pages": (Path("/usr/share/man/man1").glob("*.gz"), True),
        "Python stdlib": (Path(sysconfig.get_paths()["stdlib"]).rglob("*.py"), False),
        "installed packages (.py)": ((p for p in purelib.rglob("*.py")
                                      if p.relative_to(purelib).parts[0] != "rlm"), False),
        "HTML docs": (Path("/usr/share/doc").rglob("*.html"), False),
        "JSON files": (purelib.rglob("*.json"), False),
        "dpkg status": ([Path("/var/lib/dpkg/status")], False),
        "C headers": (Path("/usr/include").rglob("*.h"), False),
        "Node.js modules": (Path("/usr/lib/node_modules").rglob("*.js"), False),
        "/var/log": ((p for p in Path("/var/log").rglob("*") if p.is_file()
                      and p.suffix not in (".gz", ".xz", ".journal")), False),
        "LogHub (16 logs)": (loghub.glob("*_2k.log"), False),
    }
    out = {}
    for name, (paths, gz) in kinds.items():
        try:
            text = _collect(paths, limit, gz)
        except OSError:
            continue
        if text:
            out[name] = text
    return out


def generated_texts(lines: int) -> dict[str, str]:
    from evals.bench_redact import access_log

    rnd = random.Random(2)
    records = []
    for i in range(lines):
        records.append(json.dumps({
            "ts": f"2026-03-01T12:{i // 60 % 60:02d}:{i % 60:02d}.{i % 1000:03d}Z",
            "level": rnd.choice(["info", "warn", "error"]),
            "msg": rnd.choice(["request done", "cache miss", "upstream timeout", "user login"]),
            "trace_id": uuid.UUID(int=rnd.getrandbits(128)).hex,
            "span_id": f"{rnd.getrandbits(64):016x}",
            "user_id": rnd.randrange(10**6), "duration_ms": round(rnd.random() * 500, 3),
            "request_id": str(uuid.UUID(int=rnd.getrandbits(128))),
            "path": f"/api/v2/orders/{rnd.randrange(10**8)}"}))
    klog = []
    for i in range(lines):
        klog.append(f'I0301 12:{i // 60 % 60:02d}:{i % 60:02d}.{i % 1000000:06d}    '
                    f'{rnd.randrange(1, 99)} reconciler.go:{rnd.randrange(10, 999)}] "Reconciling" '
                    f'pod="default/web-{i % 50:010x}-{i % 7}x{i % 3}z" '
                    f'uid="{uuid.UUID(int=rnd.getrandbits(128))}" '
                    f'resourceVersion="{rnd.randrange(10**7)}"')
    return {"access log (generated)": access_log(lines),
            "JSON-lines log (generated)": "\n".join(records) + "\n",
            "klog (generated)": "\n".join(klog) + "\n"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--limit", type=int, default=4_000_000, help="characters of each kind")
    ap.add_argument("--lines", type=int, default=25_000, help="lines of each generated log")
    ap.add_argument("--loghub", default=str(ROOT.parent.parent / "shared" / "loghub"))
    ap.add_argument("--previous", default="95ec0e9")
    a = ap.parse_args()
    from evals.bench_redact import _chunks, _redact_fanout, previous_module
    from rlm.redact.detect import detect

    print(f"machine load (1 min): {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    previous = previous_module(a.previous) if a.previous else None
    for fn in (detect, getattr(previous, "detect", None)):
        if fn is not None:
            fn("compile the rules once")
    texts = {**real_texts(a.limit, Path(a.loghub)), **generated_texts(a.lines)}
    ref, times = "(\\d+)", "x (\\d+)"
    print(f"{'text':28s} {'MB':>5s} {'detect':>8s} {'fan-out':>8s} {ref:>7s} {times:>8s} "
          f"{'previous':>9s}   (MB/s of CPU on one core; x: detect's time over the regex "
          "pass's; previous: detect at --previous)")
    for name, text in texts.items():
        mb = len(text.encode("utf-8", "replace")) / 1e6
        chunks = _chunks(text, 16_000)
        fns = {"detect": detect, "fanout": lambda t, c=chunks: _redact_fanout(c),
               "ref": lambda t: re.findall(r"\d+", t)}
        if previous is not None:
            fns["previous"] = previous.detect
        best = {k: float("inf") for k in fns}
        for _ in range(a.rounds):
            for k, fn in fns.items():
                c = time.process_time()
                fn(text)
                best[k] = min(best[k], time.process_time() - c)
        prev = f"{mb / best['previous']:9.1f}" if "previous" in best else f"{'-':>9s}"
        print(f"{name:28s} {mb:5.1f} {mb / best['detect']:8.1f} {mb / best['fanout']:8.1f} "
              f"{mb / best['ref']:7.1f} {best['detect'] / best['ref']:8.2f} {prev}", flush=True)
    print(f"machine load (1 min) at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
