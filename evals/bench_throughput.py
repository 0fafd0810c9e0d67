"""Benchmark for issue 5: orchestrator overhead and memory of the fan-out map path.

1. Throughput. Against the fake server (rlm/testing/fake_server.py, its own process, answering
   instantly with a valid MapResult), calls per second through the full map path —
   rlm.engine.mapper.map_items + rlm.engine.call.call_json + OpenAICompatModel, with messages built
   from real chunks by the recipe — at concurrency 1, 8 and 64, next to a bare httpx.AsyncClient
   loop making the same requests (same bodies, same connection limits, reply parsed as JSON) in
   the same run. Rounds alternate bare / rlm and the best round of each counts. An extra row
   puts the call cache in front (every call a miss + one sqlite write).
   Target: rlm >= 80% of the bare loop at concurrency 64.
2. Memory. Peak RSS (resource.getrusage) of the map path over 1,000 and 20,000 chunks, each in
   its own process, plus the whole `ask_async` fan-out (gate, plan, map, run record, reduce,
   report) for the same chunk counts. Target: flat as chunks grow. "file pages" is the growth
   of resident file-backed pages (the mmap'd corpus, read whole by the line indexer): RSS that
   the kernel can drop at will, and that grows with the corpus, not with the orchestration.

Client CPU per call (time.process_time of the client process / calls) is printed next to the
throughput: on a loaded machine it is the steadier measure of orchestrator overhead.

    python -m evals.bench_throughput [--calls 1500] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUESTION = "which lines mention the gamma relay?"
WORDS = ["alpha", "beta", "gamma", "delta", "relay", "queue", "cache", "north", "south"]


# ------------------------------------------------------------------------------ helpers

def write_corpus(path: Path, lines: int) -> Path:
    with path.open("w") as f:
        for i in range(1, lines + 1):
            f.write(f"L{i:07d} " + " ".join(WORDS[(i * k) % len(WORDS)] for k in (1, 3, 5, 7))
                    + f" seq={i * 7919 % 100003}\n")
    return path


def start_server(kind: str = "fake") -> tuple[subprocess.Popen, str]:
    if kind == "instant":
        cmd = [sys.executable, __file__, "--serve-instant"]
    else:
        # the fake server sets TCP_NODELAY on its sockets: without it every answer (headers, then
        # body: two writes) waits ~40 ms for a delayed ACK, and both loops would only measure that
        cmd = [sys.executable, "-m", "rlm.testing.fake_server", "--port", "0"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    url = p.stdout.readline().strip()
    if not url.startswith("http"):
        p.kill()
        sys.exit("the fake server did not start")
    return p, url


INSTANT_REPLY = (b'{"id":"x","object":"chat.completion","created":0,"model":"fake","choices":[{"index":0,'
                 b'"message":{"role":"assistant","content":"{\\"findings\\": []}"},"finish_reason":"stop"}],'
                 b'"usage":{"prompt_tokens":100,"completion_tokens":5,"total_tokens":105}}')


def serve_instant() -> None:
    """A minimal asyncio HTTP/1.1 endpoint that answers every POST at once with a valid, empty
    MapResult (no threads, no parsing of the body): the upper bound a client can reach."""
    head = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
            + str(len(INSTANT_REPLY)).encode() + b"\r\n\r\n" + INSTANT_REPLY)

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                hdr = await reader.readuntil(b"\r\n\r\n")
                n = 0
                for line in hdr.split(b"\r\n"):
                    if line[:15].lower() == b"content-length:":
                        n = int(line[15:])
                if n:
                    await reader.readexactly(n)
                writer.write(head)
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    async def main() -> None:
        srv = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=1024)
        print(f"http://127.0.0.1:{srv.sockets[0].getsockname()[1]}/v1", flush=True)
        await srv.serve_forever()

    asyncio.run(main())


def chunks_of(path: Path, n_chunks: int, lines_per_chunk: int):
    from rlm.corpus.index import chunk_source
    from rlm.corpus.source import TextSource

    src = TextSource(path, display=path.name)
    line_bytes = src.size // max(1, src.line_count)
    chunks = chunk_source(src, max_bytes=line_bytes * lines_per_chunk + line_bytes // 2)
    return src, chunks[:n_chunks]


def rss_mb() -> float:
    """Peak RSS of this process so far (the kernel's high-water mark)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def proc_status() -> dict[str, float]:
    """VmRSS / RssAnon / RssFile now, in MB, from /proc (empty elsewhere)."""
    out = {}
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            k, _, v = line.partition(":")
            if k in ("VmRSS", "RssAnon", "RssFile"):
                out[k] = int(v.split()[0]) / 1024
    except OSError:
        pass
    return out


class PeakSampler:
    """Samples /proc/self/status every 20 ms: the peak of anonymous memory (heap: what the
    orchestrator holds) apart from file-backed pages (the mmap'd corpus, which the kernel can
    drop and which grows with the corpus, not with the number of chunks)."""

    def __init__(self):
        import threading

        self.peak_anon = self.peak_file = self.peak_rss = 0.0
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.02):
            st = proc_status()
            self.peak_anon = max(self.peak_anon, st.get("RssAnon", 0.0))
            self.peak_file = max(self.peak_file, st.get("RssFile", 0.0))
            self.peak_rss = max(self.peak_rss, st.get("VmRSS", 0.0))

    def __enter__(self):
        self._t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join()


# ------------------------------------------------------------------------------ the two paths

def map_work(model, budget, question: str):
    from rlm.prompts import recipe
    from rlm.engine.call import call_json
    from rlm.models.base import Limits

    t = recipe.task("giant-file", "map")
    out = recipe.schema_model("giant-file", "map")

    async def work(c):
        msgs = recipe.messages("giant-file", "map", question=question, where=c.describe(),
                               material=c.numbered_text(2000))
        res, _ = await call_json(model, msgs, out, Limits(max_tokens=t["max_tokens"]), budget)
        return res

    return work


async def run_rlm(url: str, chunks, concurrency: int, cache_dir: str | None = None) -> float:
    from rlm.engine.budget import Budget
    from rlm.engine.mapper import map_items
    from rlm.models.openai_compat import OpenAICompatModel

    model = OpenAICompatModel("fake", url)
    if cache_dir:
        from rlm.models.cached import CachedModel
        from rlm.store import CallCache

        model = CachedModel(model, CallCache(Path(cache_dir) / f"calls-{time.monotonic_ns()}.sqlite3"))
    budget = Budget()
    ok = seen = 0

    def done(o):
        nonlocal ok, seen
        ok += o.ok
        seen += 1

    t0, c0 = time.perf_counter(), time.process_time()
    # chunks may be a list or a stream (the memory run streams them, as `rlm ask` does)
    await map_items(chunks, map_work(model, budget, QUESTION), key=lambda c: c.id,
                    concurrency=concurrency, budget=budget, on_outcome=done, keep_results=False)
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    await model.aclose()
    assert ok == seen, f"{seen - ok} calls failed"
    return seen / dt, cpu / seen * 1e6


def bare_bodies(chunks) -> list[bytes]:
    """Exactly the request bodies the rlm path sends (json_schema mode, as the fake confirms)."""
    import orjson

    from rlm.prompts import recipe

    t = recipe.task("giant-file", "map")
    out = recipe.schema_model("giant-file", "map")
    schema = out.model_json_schema()
    bodies = []
    for c in chunks:
        msgs = recipe.messages("giant-file", "map", question=QUESTION, where=c.describe(),
                               material=c.numbered_text(2000))
        bodies.append(orjson.dumps({
            "model": "fake", "messages": msgs, "max_tokens": t["max_tokens"], "temperature": 0.0,
            "stream": False, "response_format": {"type": "json_schema", "json_schema": {
                "name": out.__name__, "schema": schema, "strict": False}}}))
    return bodies


async def run_bare(url: str, bodies: list[bytes], concurrency: int) -> float:
    import httpx
    import orjson

    it = iter(bodies)
    ok = 0
    async with httpx.AsyncClient(headers={"Content-Type": "application/json"},
                                 timeout=httpx.Timeout(60.0),
                                 limits=httpx.Limits(max_connections=64,
                                                     max_keepalive_connections=32)) as client:
        async def worker():
            nonlocal ok
            for body in it:
                r = await client.post(url + "/chat/completions", content=body)
                r.raise_for_status()
                orjson.loads(orjson.loads(r.content)["choices"][0]["message"]["content"])
                ok += 1

        t0, c0 = time.perf_counter(), time.process_time()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    assert ok == len(bodies)
    return len(bodies) / dt, cpu / len(bodies) * 1e6


# ------------------------------------------------------------------------------ memory (child)

def child_rss(mode: str, n_chunks: int, url: str, workdir: str) -> None:
    """One measurement in a fresh process: prints a JSON line."""
    import anyio

    lines_per_chunk = 3 if mode == "map" else 48  # ask: a 512-token window makes ~2 KB chunks
    path = write_corpus(Path(workdir) / f"{mode}-{n_chunks}.txt", n_chunks * lines_per_chunk)
    os.environ["RLM_DATA_DIR"] = str(Path(workdir) / f"data-{mode}-{n_chunks}")
    import gc

    import rlm.api  # noqa: F401 - import everything before the baseline
    from rlm.models.openai_compat import OpenAICompatModel

    gc.collect()
    base = proc_status()
    t0 = time.perf_counter()
    with PeakSampler() as peak:
        if mode == "map":
            import itertools

            from rlm.corpus.index import iter_chunks
            from rlm.corpus.source import TextSource

            src = TextSource(path, display=path.name)
            line_bytes = src.size // max(1, src.line_count)
            stream = itertools.islice(iter_chunks(src, line_bytes * lines_per_chunk + line_bytes // 2),
                                      n_chunks)
            counted = []
            cps, _ = anyio.run(run_rlm, url, (counted.append(1) or c for c in stream), 64)
            got = len(counted)
            assert got == n_chunks, got
        else:  # the whole ask pipeline (run record included); a tiny context: ~2 KB chunks
            from rlm.api import AskOptions, ask_async

            model = OpenAICompatModel("fake", url, context_tokens=700)  # window: 512 tokens
            opts = AskOptions(strategy="fanout", concurrency=64, usable_fraction=0.01)

            async def go():
                try:
                    return await ask_async(str(path), QUESTION, opts, model=model)
                finally:
                    await model.aclose()

            rep = anyio.run(go)
            got = rep.coverage.chunks_total
            assert rep.coverage.complete, rep.coverage.statement
            cps = got / (time.perf_counter() - t0)
    print(json.dumps({"mode": mode, "chunks": got, "baseline_mb": round(base.get("VmRSS", 0), 1),
                      "hwm_mb": round(rss_mb(), 1), "peak_mb": round(peak.peak_rss, 1),
                      "anon_growth_mb": round(peak.peak_anon - base.get("RssAnon", 0), 1),
                      "file_growth_mb": round(peak.peak_file - base.get("RssFile", 0), 1),
                      "calls_per_s": round(cps),
                      "corpus_mb": round(path.stat().st_size / 2**20, 1),
                      "wall_s": round(time.perf_counter() - t0, 1)}), flush=True)


# ------------------------------------------------------------------------------ main

def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=1500, help="calls per throughput measurement")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sizes", default="1000,20000")
    ap.add_argument("--only", choices=("throughput", "memory"), help="run one half")
    ap.add_argument("--child", nargs=4, metavar=("MODE", "N", "URL", "DIR"), help=argparse.SUPPRESS)
    ap.add_argument("--serve-instant", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve_instant:
        serve_instant()
        return
    if args.child:
        mode, n, url, d = args.child
        child_rss(mode, int(n), url, d)
        return

    import anyio

    work = tempfile.mkdtemp(prefix="rlm-bench-")
    servers = []
    try:
        path = write_corpus(Path(work) / "tp.txt", args.calls * 4)
        _src, chunks = chunks_of(path, args.calls, 4)
        bodies = bare_bodies(chunks)
        kinds = (("fake", "rlm/testing/fake_server.py (scripted, thread per connection)"),
                 ("instant", "instant asyncio endpoint (canned reply)"))
        if args.only == "memory":
            kinds = ()
        else:
            print(f"Throughput: {len(chunks):,} map calls per measurement, best of {args.rounds} "
              f"alternating rounds; each server in its own process; {os.cpu_count()} CPUs")
        for kind, title in kinds:
            server, url = start_server(kind)
            servers.append(server)
            anyio.run(run_bare, url, bodies[:50], 8)  # warm up
            anyio.run(run_rlm, url, chunks[:50], 8)
            print(f"\n{title} at {url}\n")
            print(f"{'':>4} | {'calls per second (best round)':^42} | "
                  f"{'client CPU us per call (median)':^34}")
            print(f"{'conc':>4} | {'bare':>7} {'rlm':>7} {'ratio':>6} {'+cache':>7} {'ratio':>6} | "
                  f"{'bare':>6} {'rlm':>6} {'+cache':>6} {'rlm/bare':>9}")
            print("-" * 86)
            results = {}
            for c in (1, 8, 64):
                bare, rlm_, cached = [], [], []
                for _ in range(args.rounds):
                    bare.append(anyio.run(run_bare, url, bodies, c))
                    rlm_.append(anyio.run(run_rlm, url, chunks, c))
                    cached.append(anyio.run(run_rlm, url, chunks, c, work))
                b, r, k = (max(x[0] for x in v) for v in (bare, rlm_, cached))
                bc, rc, kc = (sorted(x[1] for x in v)[len(v) // 2] for v in (bare, rlm_, cached))
                results[c] = (b, r, k, bc, rc)
                print(f"{c:>4} | {b:>7,.0f} {r:>7,.0f} {r / b:>6.0%} {k:>7,.0f} {k / b:>6.0%} | "
                      f"{bc:>6,.0f} {rc:>6,.0f} {kc:>6,.0f} {rc / bc:>9.2f}", flush=True)
            b, r, _, bc, rc = results[64]
            verdict = "meets" if r / b >= 0.8 else "MISSES"
            print(f"\nAt concurrency 64 the rlm map path reaches {r / b:.0%} of the bare loop's "
                  f"calls/s ({verdict} the 80% target); it spends {rc / bc:.2f}x the bare loop's "
                  f"client CPU per call.")
        print()
        if args.only == "throughput":
            return
        server, url = start_server("instant")  # memory: the client is what is measured
        servers.append(server)

        print("Memory, each size in its own process against the instant endpoint. baseline: RSS after "
              "imports; run peak: sampled every 20 ms\nduring the run, its growth split into heap "
              "(anonymous) and file-backed pages (the mmap'd corpus); HWM: getrusage ru_maxrss,\n"
              "the process's high-water mark (it includes writing the corpus before the run).\n")
        print(f"{'path':>22} | {'chunks':>7} | {'corpus':>8} | {'baseline':>9} | {'run peak':>9} | "
              f"{'heap +':>8} | {'mmap +':>8} | {'HWM':>8} | {'calls/s':>7}")
        print("-" * 110)
        for mode, label in (("map", "map path"), ("ask", "ask_async (whole run)")):
            rows = []
            for n in (int(x) for x in args.sizes.split(",")):
                p = subprocess.run([sys.executable, __file__, "--child", mode, str(n), url, work],
                                   capture_output=True, text=True, check=False)
                if p.returncode != 0:
                    print(f"{label}: {n} chunks failed: {p.stderr.strip()[-400:]}")
                    continue
                d = json.loads(p.stdout.strip().splitlines()[-1])
                rows.append(d)
                print(f"{label:>22} | {d['chunks']:>7,} | {d['corpus_mb']:>6.1f}MB | "
                      f"{d['baseline_mb']:>7.1f}MB | {d['peak_mb']:>7.1f}MB | "
                      f"{d['anon_growth_mb']:>6.1f}MB | {d['file_growth_mb']:>6.1f}MB | "
                      f"{d['hwm_mb']:>6.1f}MB | {d['calls_per_s']:>7,}", flush=True)
            if len(rows) == 2:
                a, z = rows
                print(f"{'':>22}   {z['chunks'] / a['chunks']:.0f}x the chunks: run peak "
                      f"{z['peak_mb'] - a['peak_mb']:+.1f} MB (heap "
                      f"{z['anon_growth_mb'] - a['anon_growth_mb']:+.1f} MB = "
                      f"{(z['anon_growth_mb'] - a['anon_growth_mb']) * 2**20 / (z['chunks'] - a['chunks']):,.0f} "
                      f"bytes per extra chunk)")
    finally:
        for server in servers:
            server.kill()
            server.wait()
        import shutil

        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
