"""Which BM25 for code-only passages? Our streaming implementation vs bm25s vs rank-bm25.

Same corpus (prose with one planted passage and a decoy), same passages (8-line windows, as
rlm.pipeline.codeonly.rank cuts them), same tokenisation (rlm.pipeline.codeonly.rank.tokens), same question.
Prints, per corpus size: seconds from file to top-5 (index + query) and the rank of the
planted passage, and peak RSS growth. A benchmark, not a test: figures, no pass/fail.

    python -m evals.bench_rank [--sizes 600,6000,40000]
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import resource
import sys
import tempfile
import time
from pathlib import Path


from rlm.pipeline.codeonly.rank import PASSAGE_LINES, query_terms, rank_passages, tokens  # noqa: E402
from rlm.corpus.source import TextSource  # noqa: E402

QUESTION = "where did the lighthouse keeper hide the brass key?"
WORDS = ("river garden window market morning letter village teacher summer paper bridge station "
         "evening harbor kitchen forest doctor mountain music engine keeper light house").split()


def write(path: Path, n_par: int, seed: int = 3) -> int:
    rnd = random.Random(seed)
    pars = [" ".join(rnd.choice(WORDS) for _ in range(40)) + "." for _ in range(n_par)]
    plant = rnd.randrange(n_par // 3, n_par - 2)
    pars[plant] = ("The lighthouse keeper hid the brass key under the third stair of the tower "
                   "before the storm.")
    pars[plant // 2] = "A key was mentioned here, and another key, and a key again."
    path.write_text("\n\n".join(pars) + "\n")
    return 2 * plant + 1


def passages(src: TextSource) -> list[tuple[int, str]]:
    out = []
    for a in range(1, src.line_count + 1, PASSAGE_LINES):
        out.append((a, "\n".join(src.lines(a, a + PASSAGE_LINES - 1))))
    return out


def rank_of(starts: list[int], line: int) -> int | None:
    for i, a in enumerate(starts, 1):
        if a <= line < a + PASSAGE_LINES:
            return i
    return None


def own(path: Path, line: int):
    src = TextSource(path)
    ps, _ = rank_passages([src], QUESTION, k=5)
    return rank_of([p.line_start for p in ps], line)


def with_bm25s(path: Path, line: int):
    import bm25s

    src = TextSource(path)
    ps = passages(src)
    corpus = [tokens(t) for _, t in ps]
    r = bm25s.BM25()  # Lucene variant, k1=1.5, b=0.75
    r.index(corpus, show_progress=False)
    q = [query_terms(QUESTION)]
    docs, _ = r.retrieve(q, k=5, show_progress=False)
    return rank_of([ps[int(i)][0] for i in docs[0]], line)


def with_rank_bm25(path: Path, line: int):
    from rank_bm25 import BM25Okapi

    src = TextSource(path)
    ps = passages(src)
    r = BM25Okapi([tokens(t) for _, t in ps])
    scores = r.get_scores(query_terms(QUESTION))
    top = sorted(range(len(ps)), key=lambda i: -scores[i])[:5]
    return rank_of([ps[i][0] for i in top], line)


def measure(fn, path: Path, line: int):
    gc.collect()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t = time.perf_counter()
    r = fn(path, line)
    dt = time.perf_counter() - t
    grew = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    return dt, r, grew


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="600,6000,40000", help="paragraphs per corpus")
    a = ap.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    d = Path(tempfile.mkdtemp(prefix="rlm-rank-"))
    print(f"| paragraphs | MB | implementation | seconds | planted rank | peak RSS growth MB |")
    print(f"|---:|---:|---|---:|---:|---:|")
    for n in (int(x) for x in a.sizes.split(",")):
        p = d / f"prose-{n}.txt"
        line = write(p, n)
        mb = p.stat().st_size / 1e6
        # own first: the peak-RSS figure only grows, so the libraries' growth is not hidden
        for name, fn in (("rlm streaming BM25", own), ("bm25s 0.3.16", with_bm25s),
                         ("rank-bm25 0.2.2", with_rank_bm25)):
            try:
                dt, r, grew = measure(fn, p, line)
            except ImportError as e:  # the libraries are not dependencies of rlm
                print(f"| {n:,} | {mb:.1f} | {name} | skipped ({e.name} not installed) | | |")
                continue
            print(f"| {n:,} | {mb:.1f} | {name} | {dt:.3f} | {r if r else '>5'} | {grew:.0f} |")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
