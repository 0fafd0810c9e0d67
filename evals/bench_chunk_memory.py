"""Benchmark for issue 8 (one chunk type): memory and time of holding a fan-out's chunks.

Cuts a big fixture log (`rlm fixture log`, ~200 MB by default) into ~20,000 chunks and holds
them all at once, the worst case of a fan-out, and prints for each code tree: the resident
memory the chunks add (anonymous memory, and file pages of the mmap made resident), the time
to cut them, and the time to render one chunk's text. With --before DIR (a checkout of an
older tree, e.g. `git archive main | tar -x -C DIR`) both trees run in the same invocation on
the same file, one fresh process each, and the ratios are printed.

    python -m evals.bench_chunk_memory [--lines 2400000] [--chunks 20000] [--before DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys, time
from pathlib import Path

def status():
    out = {}
    for line in open("/proc/self/status"):
        k, _, v = line.partition(":")
        if k in ("RssAnon", "RssFile"):
            out[k] = int(v.split()[0]) / 1024  # MB
    return out

from rlm.corpus.index import iter_chunks
from rlm.corpus.source import TextSource

src = TextSource(Path(sys.argv[1]))
src.offsets  # the line index exists in both trees: measured before the chunks
max_bytes = max(256, src.size // int(sys.argv[2]))
before = status()
t = time.perf_counter()
chunks = list(iter_chunks(src, max_bytes))
cut_s = time.perf_counter() - t
after = status()
t = time.perf_counter()
text = chunks[len(chunks) // 2].numbered_text()
render_ms = (time.perf_counter() - t) * 1000
print(json.dumps({"chunks": len(chunks), "cut_s": cut_s, "render_ms": render_ms,
                  "anon_mb": after["RssAnon"] - before["RssAnon"],
                  "file_mb": after["RssFile"] - before["RssFile"], "text_chars": len(text)}))
"""


def measure(tree: Path, log: Path, chunks: int) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree), PYTHONDONTWRITEBYTECODE="1")
    r = subprocess.run([sys.executable, "-c", CHILD, str(log), str(chunks)], env=env,
                       capture_output=True, text=True, cwd=tempfile.gettempdir())
    if r.returncode:
        sys.exit(f"measuring {tree} failed: {r.stderr.strip()[-800:]}")
    return json.loads(r.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lines", type=int, default=2_400_000)  # ~200 MB
    ap.add_argument("--chunks", type=int, default=20_000)
    ap.add_argument("--before", type=Path, help="an older tree to compare with, same run")
    ap.add_argument("--log", type=Path, help="use this log instead of writing a fixture")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="rlm-bench-chunks-") as tmp:
        log = a.log or Path(tmp) / "big.log"
        if not a.log:
            subprocess.run([sys.executable, "-m", "rlm.cli", "fixture", "log", str(log),
                            "--lines", str(a.lines)], check=True, capture_output=True, cwd=HERE)
        size = log.stat().st_size
        rows = [("this tree", measure(HERE, log, a.chunks))]
        if a.before:
            rows.insert(0, ("before", measure(a.before.resolve(), log, a.chunks)))
        lines = "" if a.log else f", {a.lines:,} lines"
        print(f"log: {size / 1e6:.0f} MB{lines}; ~{a.chunks:,} chunks held at once")
        print(f"{'tree':<10} {'chunks':>7} {'anon MB':>8} {'mmap MB':>8} {'B/chunk':>8} "
              f"{'cut s':>6} {'render ms':>9}")
        for name, m in rows:
            per = m["anon_mb"] * 1024 * 1024 / max(1, m["chunks"])
            print(f"{name:<10} {m['chunks']:>7,} {m['anon_mb']:>8.1f} {m['file_mb']:>8.1f} "
                  f"{per:>8.0f} {m['cut_s']:>6.2f} {m['render_ms']:>9.2f}")
        if a.before:
            (_, b), (_, n) = rows
            def ratio(x, y):
                return f"{x / y:.2f}x" if y > 0.05 else "n/a"
            print(f"ratios before/now: anon {ratio(b['anon_mb'], n['anon_mb'])}, "
                  f"anon+mmap {ratio(b['anon_mb'] + b['file_mb'], n['anon_mb'] + n['file_mb'])}, "
                  f"cut time {ratio(b['cut_s'], n['cut_s'])}")


if __name__ == "__main__":
    main()
