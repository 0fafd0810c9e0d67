"""How responsive `rlm mcp` stays while a long code scan runs.

Starts the real server over stdio (the SDK's client), asks an open question about a big log
(code-only: the profile scan is the whole work), and meanwhile sends `tools/list` every 0.2 s.
Prints the ask's wall time and the latency of those small requests. A run on the server's own
event loop would hold it for the whole scan; rlm.mcp.worker runs it in a thread.

    python -m evals.bench_mcp_latency [--lines 1500000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio



async def measure(folder: Path) -> None:
    from rlm.testing.mcp_client import connect, text_of

    async with connect([folder], "--model", "none") as c:
        lat: list[float] = []
        done = anyio.Event()
        took: list[float] = []

        async def ask() -> None:
            t = time.monotonic()
            r = await c.call_tool("ask", {"path": "big.log", "question": "anomalies?"})
            took.append(time.monotonic() - t)
            print("ask:", text_of(r).splitlines()[-1][:120])
            done.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask)
            await anyio.sleep(0.3)
            while not done.is_set():
                t = time.monotonic()
                await c.list_tools()
                lat.append(time.monotonic() - t)
                await anyio.sleep(0.2)
    size = (folder / "big.log").stat().st_size
    print(f"corpus {size / 1e6:.0f} MB; ask wall {took[0]:.2f}s")
    if lat:
        print(f"tools/list during the ask: n={len(lat)} median={statistics.median(lat) * 1000:.0f} ms "
              f"max={max(lat) * 1000:.0f} ms; max/ask wall = {max(lat) / took[0]:.2f}")
    else:
        print("tools/list during the ask: none answered before the ask ended")
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=1_500_000)
    args = ap.parse_args()
    from rlm.fixtures.log import write_log

    with tempfile.TemporaryDirectory(prefix="rlm-mcp-bench-") as d:
        folder = Path(d)
        t = time.monotonic()
        write_log(folder / "big.log", lines=args.lines)
        print(f"fixture written in {time.monotonic() - t:.1f}s")
        os.environ.setdefault("RLM_DATA_DIR", str(folder / "_data"))
        os.environ.setdefault("RLM_CACHE_DIR", str(folder / "_cache"))
        anyio.run(measure, folder)


if __name__ == "__main__":
    main()
