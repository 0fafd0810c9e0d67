"""Attacks on `rlm mcp`, through the SDK's own client (issue 21): how many got through.

1. The path race: a process swaps a folder inside the root with a symlink to a folder outside
   (renameat2 RENAME_EXCHANGE, as fast as it can) while the client calls read_lines (and grep on
   the folder) in a loop. Counted: answers that hold the outside file's text. The same swapper
   against a plain check-then-open in this process is the reference (it shows the race is real
   on this machine, now).
2. The regex bomb: grep `(a+)+$` on a 35-character line, then a normal grep: seconds each.

    python -m evals.bench_attacks [--calls 2000]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

from rlm.mcp.roots import Roots
from tests.mcp_harness import connect, text_of

ROOT = Path(__file__).resolve().parent.parent

SWAPPER = ROOT / "tests" / "race_swapper.py"
SECRET = "outside-secret-line"


def tree(d: Path) -> Path:
    root, outside = d / "root", d / "outside"
    (root / "d").mkdir(parents=True)
    outside.mkdir()
    (root / "d" / "data.txt").write_text("harmless line\n" * 3)
    (outside / "data.txt").write_text(f"{SECRET}\n" * 3)
    os.symlink(outside, root / "x")
    return root


def swapper(root: Path) -> subprocess.Popen:
    p = subprocess.Popen([sys.executable, str(SWAPPER), str(root / "d"), str(root / "x")],
                         stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready"
    return p


def naive(root: Path, tries: int) -> tuple[int, int]:
    """(leaks, reads) of check-then-open under the swapper."""
    roots, leaks, reads = Roots([str(root)]), 0, 0
    p = swapper(root)
    try:
        for _ in range(tries):
            try:
                with open(roots.resolve("d/data.txt")) as fh:
                    t = fh.read()
            except Exception:  # noqa: BLE001 - refused or raced: not a read
                continue
            reads += 1
            leaks += SECRET in t
    finally:
        p.kill()
        p.wait()
    return leaks, reads


async def through_mcp(root: Path, calls: int) -> dict:
    out = {"calls": 0, "answered": 0, "refused": 0, "leaks": 0}
    async with connect([root]) as c:
        p = swapper(root)
        try:
            for i in range(calls):
                if i % 2:
                    r = await c.call_tool("grep", {"path": "d", "pattern": "line"})
                else:
                    r = await c.call_tool("read_lines", {"path": "d/data.txt", "start": 1, "end": 3})
                t = text_of(r)
                out["calls"] += 1
                out["leaks"] += SECRET in t or SECRET in str(r.structured_content)
                out["answered" if not r.is_error else "refused"] += 1
        finally:
            p.kill()
            p.wait()
    return out


async def regex_bomb(root: Path) -> tuple[float, float, str]:
    (root / "a.txt").write_text("a" * 35 + "b\nERROR disk full\n")
    async with connect([root]) as c:
        t0 = time.perf_counter()
        bomb = await c.call_tool("grep", {"path": "a.txt", "pattern": "(a+)+$"})
        t1 = time.perf_counter()
        normal = await c.call_tool("grep", {"path": "a.txt", "pattern": "ERROR"})
        t2 = time.perf_counter()
    return t1 - t0, t2 - t1, f"{text_of(bomb)[:60]!r} / {text_of(normal)[:40]!r}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=2000)
    a = ap.parse_args()
    print(f"machine load (1 min): {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp:
        root = tree(Path(tmp))
        leaks, reads = naive(root, 20_000)
        print(f"1. reference, check-then-open in-process: {leaks} leaks in {reads:,} reads "
              "(20,000 tries)")
        r = anyio.run(lambda: through_mcp(root, a.calls))
        print(f"   rlm mcp read_lines/grep: {r['leaks']} leaks in {r['calls']:,} calls "
              f"({r['answered']:,} answered, {r['refused']:,} refused as a symlink met)")
        bomb, normal, shown = anyio.run(lambda: regex_bomb(root))
        print(f"2. regex bomb: (a+)+$ answered in {bomb:.2f} s, the next grep in {normal:.2f} s: "
              f"{shown}")
    print(f"machine load (1 min) at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
