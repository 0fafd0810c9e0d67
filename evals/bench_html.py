"""The HTML report's size and drawing time on a 600,000-line log (target: under 2 MB).

    python -m evals.bench_html [--lines 600000] [--fanout] [--loghub]

For each question: the JSON report's size, the page's size and its ratio to the 2 MB target,
the seconds to draw the page against the seconds of the run itself (same process, same
machine, so the ratio holds however loaded the machine is). `--fanout` adds a model-read run
against tests/fake_server.py over the whole log (thousands of chunks, every one read), the
largest coverage map rlm writes. `--loghub` adds a real log's variety at the same size:
evals/data/loghub/BGL_2k.log repeated to the line count (85 ranked event kinds, each with its
lanes record; its times go back at each repeat, so its axis is the line number). Each row also
gives the lanes record's share of the JSON (`timeline`, rlm.corpus.lanes) and the seconds
spent recording it against the run's.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

TARGET = 2_000_000
QUESTIONS = [("anomalies", "anomalies?", {}),
             ("grep-5000-hits", 'show every line with "WARN"', {}),
             ("window", "what happened between 08:30 and 09:00?", {})]


def _ask(path: Path, question: str, **kw):
    import anyio

    from rlm.api import AskOptions, ask_async

    t0 = time.perf_counter()
    rep = anyio.run(lambda: ask_async(str(path), question, AskOptions(**kw)))
    return rep, time.perf_counter() - t0


def _row(name: str, rep, run_s: float, out: Path, lanes_s: float) -> str:
    import json

    from rlm.render.html import report_html

    t0 = time.perf_counter()
    page = report_html(rep)
    draw_s = time.perf_counter() - t0
    out.write_text(page, encoding="utf-8")
    size = len(page.encode())
    js = len(rep.model_dump_json())
    tl = len(json.dumps(rep.timeline)) if rep.timeline else 0
    kinds = len(rep.event_kinds)
    return (f"| {name} | {rep.strategy} | {kinds} | {js:,} | {tl:,} | {size:,} | "
            f"{size / TARGET:.1%} | {draw_s:.2f} | {lanes_s:.2f} | {run_s:.2f} | "
            f"{draw_s / max(run_s, 1e-9):.2f} | {lanes_s / max(run_s, 1e-9):.2f} |")


class _LanesClock:
    """Seconds spent in rlm.corpus.lanes.kind_lanes during a run (wrapped where profile calls it)."""

    def __init__(self):
        import rlm.pipeline.strategies.profile as profile

        self.profile, self.real, self.s = profile, profile.kind_lanes, 0.0

        def timed(*a, **kw):
            t0 = time.perf_counter()
            try:
                return self.real(*a, **kw)
            finally:
                self.s += time.perf_counter() - t0
        profile.kind_lanes = timed

    def take(self) -> float:
        s, self.s = self.s, 0.0
        return s


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=600_000)
    ap.add_argument("--fanout", action="store_true")
    ap.add_argument("--loghub", action="store_true")
    a = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="rlm-html-"))
    os.environ.setdefault("RLM_DATA_DIR", str(tmp / "data"))
    os.environ.setdefault("RLM_CACHE_DIR", str(tmp / "cache"))
    log = tmp / "big.log"
    import subprocess

    subprocess.run([sys.executable, "-m", "rlm.cli", "fixture", "log", str(log), "--lines",
                    str(a.lines)], check=True, capture_output=True)
    rows = []
    clock = _LanesClock()
    for name, q, kw in QUESTIONS:
        rep, run_s = _ask(log, q, model="none", **kw)
        rows.append(_row(name, rep, run_s, tmp / f"{name}.html", clock.take()))
    if a.loghub:
        bgl = tmp / "bgl.log"
        text = (Path(__file__).parent / "data" / "loghub" / "BGL_2k.log").read_text("utf-8")
        with bgl.open("w", encoding="utf-8") as fh:
            for _ in range(-(-a.lines // 2000)):
                fh.write(text)
        rep, run_s = _ask(bgl, "anomalies?", model="none")
        rows.append(_row("BGL_2k repeated", rep, run_s, tmp / "bgl.html", clock.take()))
    if a.fanout:
        from rlm.testing import FakeServer

        with FakeServer() as server:
            rep, run_s = _ask(log, "what is going on?", model="m", base_url=server.url,
                              strategy="fanout", concurrency=8)
            rows.append(_row("fanout-all-read", rep, run_s, tmp / "fanout.html", clock.take()))
    load = os.getloadavg()
    print(f"HTML report on a {a.lines:,}-line log ({log.stat().st_size:,} bytes); "
          f"load average {load[0]:.1f} on {os.cpu_count()} cores; pages in {tmp}")
    print("| question | strategy | event kinds | JSON bytes | of it timeline | HTML bytes | of 2 MB "
          "| draw s | lanes s | run s | draw/run | lanes/run |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
