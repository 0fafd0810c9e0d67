"""Precision and recall of code's candidate rules on a labelled BGL-style log.

Writes `rlm.fixtures.bgl` (labels kept in the key, not in the log), profiles it, and scores
every rule by code against the key:

- line level: the lines a rule selects (every line of the shapes it picked; a burst: the
  shape's lines in its burst windows; silence / after-quiet: the line it names) against the
  alert lines;
- candidates: the <= 400 lines the profile hands on (what a model or the code-only answer
  reads): their precision, and how many alert categories they reach.

    python -m evals.bench_candidates [--lines 200000] [--seed 11]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from rlm.corpus.counter import read_blocks
from rlm.corpus.mask import mask_block
from rlm.corpus.profile import profile_log
from rlm.corpus.signals import RULES
from rlm.corpus.source import TextSource
from rlm.fixtures.bgl import write_bgl


def selected_lines(path: Path, prof) -> dict[str, set[int]]:
    """Line numbers each rule selects, found by one more pass over the file."""
    by_template: dict[str, dict[bytes, set[int] | None]] = {r: {} for r in RULES}
    named: dict[str, set[int]] = {r: set() for r in RULES}
    for p in prof.picks:
        if p.rule in ("silence", "after-quiet"):
            named[p.rule].update(p.lines)
        elif p.rule == "burst":
            by_template["burst"].setdefault(p.template, set()).update(p.windows)
        else:
            by_template[p.rule][p.template] = None  # every window
    out = {r: set(named[r]) for r in RULES}
    line = 0
    for window, (_, block) in enumerate(read_blocks(path, block=_block_of(prof))):
        rows = mask_block(block).rstrip(b"\n").split(b"\n")
        for i, t in enumerate(rows, line + 1):
            for r, temps in by_template.items():
                if t in temps:
                    wins = temps[t]
                    if wins is None or window in wins:
                        out[r].add(i)
        line += len(rows)
    return out


def _block_of(prof) -> int:
    from rlm.corpus.counter import block_size
    return block_size(prof.bytes)


def old_candidates(prof, cap: int = 400) -> set[int]:
    """The selection before the rules: rare or error-level shapes, rarest first, their first
    20 lines each, up to the cap."""
    shapes = [tp for tp in prof.templates if "rare" in tp.rules or tp.error_level]
    shapes.sort(key=lambda x: (x.count, not x.error_level, x.lines[0]))
    out: list[int] = []
    for tp in shapes:
        out += tp.lines[: max(0, cap - len(out))]
    return set(out)


def score(sel: set[int], alerts: set[int]) -> tuple[float, float, int]:
    tp = len(sel & alerts)
    return (tp / len(sel) if sel else 0.0), (tp / len(alerts) if alerts else 0.0), len(sel)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=200_000)
    ap.add_argument("--seed", type=int, default=11)
    a = ap.parse_args()
    d = Path(tempfile.mkdtemp(prefix="rlm-bgl-"))
    log = d / "bgl.log"
    key = write_bgl(log, a.lines, a.seed)
    alerts = {int(k) for k in key["alert_lines"]}
    cat_of = {int(k): v for k, v in key["alert_lines"].items()}
    t = time.perf_counter()
    with TextSource(log) as src:
        prof = profile_log(src)
    wall = time.perf_counter() - t
    sel = selected_lines(log, prof)
    print(f"BGL-style log: {key['lines']:,} lines, {len(alerts):,} alert lines in "
          f"{len(key['categories'])} categories (seed {a.seed}); profile {wall:.1f}s")
    print(f"{'rule or set':<34} {'precision':>9} {'recall':>7} {'lines':>8}")
    rows = [(r, sel[r]) for r in RULES]
    rows.append(("old: rare or error level", sel["rare"] | sel["severity"]))
    rows.append(("all rules (union)", set().union(*sel.values())))
    rows.append(("lexicon + rare-in-component + burst", sel["lexicon"] | sel["rare-in-component"]
                 | sel["burst"]))
    for name, s in rows:
        p, r, n = score(s, alerts)
        print(f"{name:<34} {p:>9.2f} {r:>7.2f} {n:>8,}")
    for name, cand in (("candidates handed on (<= 400)", set(prof.candidates)),
                       ("old candidates (rare, error level)", old_candidates(prof))):
        p, _, n = score(cand, alerts)
        cats = {cat_of[ln] for ln in cand if ln in cat_of}
        print(f"{name:<34} {p:>9.2f} {'':>7} {n:>8,}  "
              f"alert categories reached: {len(cats)}/{len(key['categories'])}")
    silence_ok = any(p.rule == "silence" and b"heartbeat" in p.template for p in prof.picks)
    back_ok = any(p.rule == "after-quiet" and b"temperature" in p.template for p in prof.picks)
    print(f"the stopped heartbeat found by 'silence': {silence_ok}; the returning shape found by "
          f"'after-quiet': {back_ok}")
    print(json.dumps({"rules_by_candidate": {r: sum(1 for v in prof.rules_by_line.values() if r in v)
                                            for r in RULES}}))


if __name__ == "__main__":
    main()
