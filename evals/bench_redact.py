"""Benchmark for issue 13: the redaction detector's false positives, recall and speed.

1. False positives on the three fixtures (`rlm fixture log|transcript|repo`, default seeds):
   every distinct value the detector would replace, with its kind. Values the generators planted
   as real personal data (a documentation IP on the log's login line, a security@ address in the
   repo's docs) are expected; anything else is a false positive.
2. Look-alikes: ids that look like secrets but are not (order/transaction/session ids, hashes in
   file names, commit hashes, UUIDs, timestamps, counters, a Luhn-failing card, a bad IBAN): how
   many survive `Redactor.redact`.
3. Recall on planted secrets and PII (one of each kind the detector claims).
4. Speed: MB/s of `detect` on the log fixture, next to one pass of a single compiled regex
   (`re.findall(r"\\d+")`) over the same text in the same run as the machine's reference.

    python -m evals.bench_redact [--lines 20000]
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from tests.test_redact import CONTEXT, KEY_BLOCK, LOOKALIKES, PLANTED  # noqa: E402

from rlm.fixtures.log import write_log  # noqa: E402
from rlm.fixtures.repo import write_repo  # noqa: E402
from rlm.fixtures.transcript import write_transcript  # noqa: E402
from rlm.redact.detect import Redactor, detect  # noqa: E402

EXPECTED_PII = {("IP", "198.51.100.173"), ("EMAIL", "security@parcelpost.invalid")}


def fixture_texts(d: Path, lines: int) -> dict[str, str]:
    write_log(d / "f.log", lines=lines)
    write_transcript(d / "t.txt", lines=lines)
    write_repo(d / "repo")
    repo = d / "repo"
    repo_text = "\n".join(p.relative_to(repo).as_posix() + "\n" + p.read_text("utf-8", "replace")
                          for p in sorted(repo.rglob("*")) if p.is_file() and p.suffix != ".png")
    return {"log": (d / "f.log").read_text(), "transcript": (d / "t.txt").read_text(),
            "repo": repo_text}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=20_000)
    a = ap.parse_args()
    print(f"machine load (1 min): {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp:
        texts = fixture_texts(Path(tmp), a.lines)
    detect("warm up the plugins")
    print("\n1. false positives on the fixtures")
    total_fp = total_tokens = 0
    for name, text in texts.items():
        t0 = time.perf_counter()
        hits = detect(text)
        dt = time.perf_counter() - t0
        found = {(h.kind, h.value) for h in hits}
        fps = sorted(found - EXPECTED_PII)
        tokens = len(re.findall(r"\S+", text))
        total_fp += len(fps)
        total_tokens += tokens
        print(f"   {name:10s} {len(text) / 1e6:6.2f} MB {text.count(chr(10)):>8,} lines "
              f"{tokens:>9,} tokens: {len(found)} distinct values, {len(fps)} false positives "
              f"{fps[:5]} ({dt:.2f} s)")
    print(f"   false-positive rate: {total_fp} / {total_tokens:,} whitespace tokens")
    out = Redactor().redact("\n".join(f"ids {x} ok" for x in LOOKALIKES))
    kept = [x for x in LOOKALIKES if x in out]
    print(f"\n2. look-alikes kept: {len(kept)} / {len(LOOKALIKES)}"
          + ("" if len(kept) == len(LOOKALIKES) else
             f"; redacted: {[x for x in LOOKALIKES if x not in kept]}"))
    planted = "\n".join(CONTEXT.get(v, "user saw {} here").format(v) for v in PLANTED)
    found = {h.value: h.kind for h in detect(planted + "\n" + KEY_BLOCK)}
    hit = [v for v, k in PLANTED.items() if found.get(v) == k]
    print(f"\n3. planted secrets and PII found with the right kind: {len(hit)} / {len(PLANTED)} "
          f"(+ the private-key block: {'found' if any(len(v) > 100 for v in found) else 'MISSED'})")
    log = texts["log"]
    t0 = time.perf_counter()
    detect(log)
    det = time.perf_counter() - t0
    t0 = time.perf_counter()
    re.findall(r"\d+", log)
    ref = time.perf_counter() - t0
    mb = len(log.encode()) / 1e6
    print(f"\n4. speed on the log: detect {mb / det:.2f} MB/s; one regex pass (\\d+) "
          f"{mb / ref:.1f} MB/s; ratio {det / ref:.0f}x")


if __name__ == "__main__":
    main()
