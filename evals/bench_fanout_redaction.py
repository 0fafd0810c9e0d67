"""Benchmark: what a whole fan-out spends on redaction, end to end (issue 21, item 4).

`rlm ask LOG "which errors happened?" --strategy fanout` over the 16 LogHub logs (joined,
`--copies` times), against the fake OpenAI-compatible server (rlm.testing.FakeServer) in a
process of its own, so that this process's CPU time is the client's alone, one call at a time
(so that placeholders are numbered alike from run to run). Three contenders,
interleaved round after round (this machine's speed drifts 20-40% from minute to minute), best
of `--rounds` each:

- redaction off;
- redaction on, each prompt scanned as it is sent (session 6's way);
- redaction on, prompts built and scanned a batch ahead (rlm.engine.ahead, rlm.redact.batch).

What redaction costs is the CPU time of the thread that runs it (the event loop's; the run's
other threads work meanwhile) spent in what only redaction does (the prescan of a batch, and
each prompt's redaction as it is sent), summed over the run; divided into the corpus's size,
that is the fan-out's redaction rate (MB/s on one core). The whole run's CPU time is printed too,
but moves by more than redaction costs from run to run here. Next to it, the reference pass
(one regex, `re.findall(r"\\d+")`) is timed over the same texts where redaction reads them, in
the run (the issue asks for redaction "measured against a single-regex pass in the same run":
the run's other work leaves both with cold caches). Also checked: the two ways send
the same prompts (their hashes), so the faster one is not sending less.

    python -m evals.bench_fanout_redaction [--loghub DIR] [--copies 3] [--rounds 3]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent.parent

SERVER = """
import sys, time
from rlm.testing import FakeServer
s = FakeServer(port=int(sys.argv[1])).start()
s.on("MapResult", lambda req, text: {"findings": []})
print("ready", flush=True)
sys.stdin.read()
"""


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


_DIGITS = re.compile(r"\d+")


def _reference(texts) -> float:
    """CPU seconds of the reference pass, one regex (`re.findall(r"\\d+")`) over the texts,
    where redaction reads them (in the run, between its other work: the same cold caches)."""
    c = time.thread_time()
    for t in texts:
        if isinstance(t, str):
            _DIGITS.findall(t)
    return time.thread_time() - c


def _run(path: Path, url: str, redact: bool, ahead: bool
         ) -> tuple[float, float, float, str, object, float]:
    """(CPU seconds of the run, of its redaction, wall seconds, a hash of the prompts sent,
    the report) of one fan-out. Redaction's CPU time is taken around what only redaction does
    (RedactingModel.prescan and redact_now, a few thousand calls): the run's own CPU time moves
    by more than redaction costs from one run to the next on this machine."""
    from rlm.api import AskOptions, ask_async
    from rlm.models.openai_compat import reset_mode_cache
    from rlm.redact import model as redact_model

    sent = hashlib.sha256()
    spent = [0.0]
    reference = [0.0]
    cls = redact_model.RedactingModel
    real_now, real_scan = cls.redact_now, cls.prescan

    def now(self, messages):  # the thread's CPU time: the run's other threads work meanwhile
        if not ahead:  # each prompt scanned as sent: the reference reads it there too
            reference[0] += _reference(m.get("content") for m in messages)
        c = time.thread_time()
        out = real_now(self, messages)
        spent[0] += time.thread_time() - c
        for m in out:
            sent.update(str(m.get("content")).encode())
        return out

    def scan(self, texts):
        reference[0] += _reference(texts)
        c = time.thread_time()
        real_scan(self, texts)
        spent[0] += time.thread_time() - c

    cls.redact_now = now
    cls.prescan = scan if ahead else None  # None: Ahead then builds each prompt as it is sent
    reset_mode_cache()
    opts = AskOptions(model="fake", base_url=url, redact=redact, strategy="fanout",
                      no_cache=True, concurrency=1, timeout=30.0)
    c, w = time.process_time(), time.perf_counter()
    try:
        rep = anyio.run(lambda: ask_async(str(path), "which errors happened?", opts))
    finally:
        cls.redact_now, cls.prescan = real_now, real_scan
    return (time.process_time() - c, spent[0], time.perf_counter() - w, sent.hexdigest(), rep,
            reference[0])


def _guard(text: str, mb: float) -> None:
    """The prompt guard every fan-out prompt passes, redaction or not (rlm.corpus.instructions.
    withhold_text), over the same text in 16 KB prompts: its one RE2 pass, next to the Python
    word gate it ran behind until session 7."""
    from rlm.corpus.instructions import _HINT, withhold_text

    pieces, a = [], 0
    while a < len(text):
        b = text.find("\n", a + 16_000)
        b = len(text) if b < 0 else b + 1
        pieces.append(text[a:b])
        a = b
    best = {"guard": float("inf"), "gate": float("inf")}
    for _ in range(3):
        for k, fn in (("guard", withhold_text), ("gate", _HINT.search)):
            c = time.process_time()
            for p in pieces:
                fn(p)
            best[k] = min(best[k], time.process_time() - c)
    print(f"   the prompt guard (withhold_text) over the same text in 16 KB prompts: "
          f"{mb / best['guard']:.0f} MB/s; the word gate it ran behind before: "
          f"{mb / best['gate']:.1f} MB/s")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--loghub", default=str(ROOT.parent.parent / "shared" / "loghub"))
    ap.add_argument("--copies", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    logs = sorted(Path(a.loghub).glob("*_2k.log"))
    if not logs:
        sys.exit(f"no LogHub logs under {a.loghub}")
    print(f"machine load (1 min): {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    from rlm.redact.detect import detect

    detect("compile the rules once (0.3-0.4 s), before any run is timed")
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(port)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout.readline().strip() == "ready"
        url = f"http://127.0.0.1:{port}/v1"
        with tempfile.TemporaryDirectory() as tmp:
            os.environ.setdefault("HOME", tmp)
            path = Path(tmp) / "loghub.log"
            text = "".join(p.read_text("utf-8", "replace") for p in logs) * a.copies
            path.write_text(text, "utf-8")
            mb = path.stat().st_size / 1e6
            ways = {"off": (False, True), "each": (True, False), "ahead": (True, True)}
            best: dict[str, tuple[float, ...]] = {k: (float("inf"),) * 4 for k in ways}
            hashes: dict[str, set] = {k: set() for k in ways}
            chunks = 0
            for _ in range(a.rounds):
                for k, (redact, ahead) in ways.items():
                    c, r, w, h, rep, ref = _run(path, url, redact, ahead)
                    best[k] = (min(best[k][0], c), min(best[k][1], r), min(best[k][2], w),
                               min(best[k][3], ref) if redact else float("inf"))
                    hashes[k].add(h)
                    chunks = rep.coverage.chunks_total
        print(f"fan-out over {mb:.1f} MB ({len(logs)} LogHub logs x {a.copies}): {chunks} chunks, "
              f"one call at a time, best of {a.rounds} (CPU s / wall s)")
        for k in ways:
            c, r, w, ref = best[k]
            line = f"   {k:6s} run: CPU {c:6.2f} s, wall {w:6.2f} s"
            if k != "off":
                line += (f"; redaction: CPU {r:5.2f} s, {mb / r:5.1f} MB/s on one core; the "
                         f"reference pass where it reads: {mb / ref:5.1f} MB/s (redaction "
                         f"takes {r / ref:.2f}x its time)")
            print(line)
        print(f"   a batch ahead takes {best['ahead'][1] / best['each'][1]:.2f}x the redaction "
              "time of each prompt as it is sent")
        _guard(text, mb)
        same = hashes["each"] == hashes["ahead"] and len(hashes["ahead"]) == 1
        print(f"   the two ways sent the same prompts: {same}")
        print(f"machine load (1 min) at the end: {os.getloadavg()[0]:.2f}")
    finally:
        server.stdin.close()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
