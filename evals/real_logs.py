"""rlm on real public logs: the LogHub 2k samples in evals/data/loghub/ (see its README).

1. Detection: probe each family's head sample (`<Family>_head.log`) the way `rlm ask` does and
   print the kind it was given and why.
2. Candidates on labelled logs (BGL_2k.log, Thunderbird_2k.log when present): the first token
   of each line is the label (`-` normal, anything else an alert category). The label is
   stripped, the stripped log is profiled by rlm's profiler and rules, and every rule and the
   candidate lines handed on are scored by code against the labels (line-level precision and
   recall, alert categories reached), with the issue's two baselines: "rare + error level"
   and "severity word alone".
3. `--ask`: `rlm ask <stripped log> "anomalies?" --model none --json` end to end, and the alert
   categories its findings cite.

    python -m evals.real_logs [--ask]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rlm.corpus.probe import probe_source
from rlm.corpus.source import TextSource

DATA = Path(__file__).resolve().parent / "data" / "loghub"
FAMILIES = ("Android", "Apache", "BGL", "HDFS", "HPC", "Hadoop", "HealthApp", "Linux", "Mac",
            "OpenSSH", "OpenStack", "Proxifier", "Spark", "Thunderbird", "Windows", "Zookeeper")
LABELLED = ("BGL", "Thunderbird")


def head_path(family: str) -> Path:
    return DATA / f"{family}_head.log"


def detect_family(family: str) -> tuple[str, bool, str]:
    """(kind the probe gave, is it a log, the detector's reason) for one family's head."""
    with TextSource(head_path(family)) as src:
        pr = probe_source(src)
    why = "; ".join(pr.log_format.reasons) if pr.log_format else ""
    return pr.kind, pr.kind == "log", why


def print_detection() -> int:
    print(f"{'family':<12} {'kind':<8} {'log?':<5} why")
    misses = 0
    for fam in FAMILIES:
        kind, is_log, why = detect_family(fam)
        misses += not is_log
        print(f"{fam:<12} {kind:<8} {'yes' if is_log else 'NO':<5} {why}")
    print(f"detected as logs: {len(FAMILIES) - misses}/{len(FAMILIES)}")
    return misses


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ask", action="store_true", help="also run `rlm ask ... --model none`")
    a = ap.parse_args()
    print_detection()
    for fam in LABELLED:
        path = DATA / f"{fam}_2k.log"
        if path.exists():
            print()
            from evals.real_candidates import report_candidates  # noqa: PLC0415
            report_candidates(fam, path, ask=a.ask)
        else:
            print(f"\n{fam}: {path.name} not present (only the head sample is stored)")


if __name__ == "__main__":
    main()
