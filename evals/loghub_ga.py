"""Grouping accuracy (GA) of rlm's template table on the 16 LogHub 2k samples.

GA is LogHub's measure (Zhu et al., ICSE-SEIP 2019): a line is right when the set of lines in
its group equals the set of lines with its EventId. The lines are grouped the way a user gets
them: `build_table` over the file (one counting pass, the miner over the distinct shapes),
then `assign` (one template id per line), with no per-family setting. Beside each family:
Drain's published GA on the same sample (a format and masking regexes tuned per family; see
the data folder's README.md). Also prints each family's event kinds against the labelled
ones, the whole run's lines per second, and "cite every line that reports a failure" scored
against BGL's alert labels (and the false alarms on Thunderbird, all normal in its sample).

The samples are evaluation data, never shipped with the package (their licence asks for the
repository URL and a citation: LICENSE and CITATION beside them).

    python evals/loghub_ga.py [--data DIR] [--markdown] [--errors FAMILY]
"""

from __future__ import annotations

import argparse
import csv
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

from rlm.corpus.anomalies import failure_lines
from rlm.corpus.source import TextSource
from rlm.corpus.templates import build_table

FAMILIES = ("Android", "Apache", "BGL", "HDFS", "HPC", "Hadoop", "HealthApp", "Linux", "Mac",
            "OpenSSH", "OpenStack", "Proxifier", "Spark", "Thunderbird", "Windows", "Zookeeper")
DRAIN = {"HDFS": 0.9975, "Hadoop": 0.9475, "Spark": 0.92, "Zookeeper": 0.9665, "BGL": 0.9625,
         "HPC": 0.887, "Thunderbird": 0.955, "Windows": 0.997, "Linux": 0.69, "Android": 0.911,
         "HealthApp": 0.78, "Apache": 1.0, "Proxifier": 0.5265, "OpenSSH": 0.7875,
         "OpenStack": 0.7325, "Mac": 0.7865}
DEFAULT_DATA = ("/work/shared/loghub", str(Path(__file__).resolve().parents[2] / "shared" / "loghub"))


def grouping_accuracy(pred: list, truth: list[str]) -> float:
    """Share of lines whose predicted group is exactly the set of lines with their label."""
    if len(pred) != len(truth):
        raise ValueError(f"{len(pred)} predictions for {len(truth)} labelled lines")
    sizes = Counter(truth)
    groups: dict = defaultdict(list)
    for i, p in enumerate(pred):
        groups[p].append(i)
    right = 0
    for idx in groups.values():
        labels = {truth[i] for i in idx}
        if len(labels) == 1 and sizes[truth[idx[0]]] == len(idx):
            right += len(idx)
    return right / len(truth) if truth else 1.0


def labels(data: Path, family: str) -> list[str]:
    with open(data / f"{family}_2k.log_structured.csv", encoding="utf-8", errors="replace") as fh:
        return [row["EventId"] for row in csv.DictReader(fh)]


def family_ga(data: Path, family: str) -> dict:
    with TextSource.open(str(data / f"{family}_2k.log")) as src:
        t = time.perf_counter()
        table = build_table(src)
        pred = list(table.assign(src))
        wall = time.perf_counter() - t
    truth = labels(data, family)
    return {"family": family, "ga": grouping_accuracy(pred, truth), "kinds": len(table.templates),
            "labelled": len(set(truth)), "lines": len(pred), "wall": wall, "pred": pred,
            "truth": truth, "table": table}


def errors(r: dict, top: int = 12) -> list[str]:
    """The predicted groups that are not exactly one label's lines, biggest first."""
    sizes = Counter(r["truth"])
    groups: dict = defaultdict(list)
    for i, p in enumerate(r["pred"]):
        groups[p].append(i)
    out = []
    for tid, idx in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        got = Counter(r["truth"][i] for i in idx)
        if len(got) > 1 or sizes[r["truth"][idx[0]]] != len(idx):
            tpl = r["table"].by_id(tid).template if tid else "(untracked)"
            parts = ", ".join(f"{lab} {n} of {sizes[lab]}" for lab, n in got.most_common(4))
            out.append(f"  {len(idx):>5} lines  {tpl[:100]}  <- {parts}")
    return out[:top]


def failure_recall(data: Path, family: str = "BGL") -> dict:
    """"Cite every line that reports a failure" on a labelled sample (first field: `-` normal,
    else an alert category): the lines of the kinds that report a failure
    (rlm.corpus.anomalies.failure_lines), the label stripped, scored against the alerts."""
    raw = (data / f"{family}_2k.log").read_text(encoding="utf-8", errors="replace").splitlines()
    alerts = {n for n, line in enumerate(raw, 1) if not line.startswith("- ")}
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / f"{family}.log"
        path.write_text("\n".join(line.split(" ", 1)[1] for line in raw) + "\n")
        with TextSource.open(str(path)) as src:
            lines, kinds = failure_lines(build_table(src), src)
    hit = len(alerts & set(lines))
    return {"family": family, "lines": len(lines), "kinds": len(kinds), "alerts": len(alerts),
            "precision": hit / len(lines) if lines else 0.0,
            "recall": hit / len(alerts) if alerts else None}


def find_data(arg: str | None) -> Path:
    for d in ([arg] if arg else DEFAULT_DATA):
        if d and (Path(d) / "HDFS_2k.log_structured.csv").exists():
            return Path(d)
    raise SystemExit(f"no LogHub samples in {arg or ' or '.join(DEFAULT_DATA)}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", help="folder of NAME_2k.log and NAME_2k.log_structured.csv")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    ap.add_argument("--errors", action="append", default=[], help="show a family's misgroupings")
    a = ap.parse_args()
    data = find_data(a.data)
    results = [family_ga(data, f) for f in FAMILIES]
    if a.markdown:
        print("| family | GA rlm | GA Drain (tuned, published) | event kinds | labelled |")
        print("|---|---|---|---|---|")
    for r in results:
        f = r["family"]
        if a.markdown:
            print(f"| {f} | {r['ga']:.3f} | {DRAIN[f]:.3f} | {r['kinds']} | {r['labelled']} |")
        else:
            print(f"{f:<12} GA {r['ga']:.3f}  Drain {DRAIN[f]:.3f}  kinds {r['kinds']:>4} "
                  f"labelled {r['labelled']:>4}")
        if f in a.errors:
            print("\n".join(errors(r)))
    mean = sum(r["ga"] for r in results) / len(results)
    drain = sum(DRAIN.values()) / len(DRAIN)
    lines = sum(r["lines"] for r in results)
    wall = sum(r["wall"] for r in results)
    above = sum(r["ga"] >= DRAIN[r["family"]] for r in results)
    print(f"{'| **mean** | ' if a.markdown else 'mean GA '}{mean:.3f}"
          f"{' | ' if a.markdown else '  Drain '}{drain:.3f}{' | | |' if a.markdown else ''}")
    print(f"at or above Drain on {above} of {len(results)} families; {lines:,} lines in "
          f"{wall:.2f} s (table and assignment, {lines / max(wall, 1e-9):,.0f} lines/s)")
    bgl, tb = failure_recall(data, "BGL"), failure_recall(data, "Thunderbird")
    print(f"BGL, lines that report a failure: {bgl['lines']} lines of {bgl['kinds']} kinds; "
          f"precision {bgl['precision']:.2f}, recall {bgl['recall']:.2f} against the "
          f"{bgl['alerts']} alert lines (target: recall >= 0.8 at precision >= 0.6)")
    print(f"Thunderbird (no alert in the sample): {tb['lines']} lines of {tb['kinds']} kinds "
          "reported as failures (every one a false alarm by the labels)")


if __name__ == "__main__":
    main()
