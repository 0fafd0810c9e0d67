"""What the real-question evaluation (evals/real_questions.py) scores against: the LogHub
samples' folder, a question case, and the answers computed by regexes written here (counts,
group leaders, ties, windows, labelled event kinds). Evaluation code: never shipped."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent


def loghub() -> Path:
    for p in (os.environ.get("LOGHUB"), "/work/shared/loghub", ROOT.parent / "shared/loghub"):
        if p and Path(p, "OpenSSH_2k.log").exists():
            return Path(p)
    raise SystemExit("LogHub samples not found: set LOGHUB to the folder of *_2k.log files")


@dataclass
class Case:
    family: str
    question: str
    kind: str  # count | top | over | tie | lines | window | anomalies | folder | failures
    expect: Callable[[list[str]], object]  # the file's lines -> the regex answer
    note: str = ""


def lines_with(rx: str, flags: int = 0) -> Callable[[list[str]], set[int]]:
    r = re.compile(rx, flags)
    return lambda lines: {i for i, s in enumerate(lines, 1) if r.search(s)}


def count_of(rx: str, flags: int = 0) -> Callable[[list[str]], int]:
    f = lines_with(rx, flags)
    return lambda lines: len(f(lines))


def top_of(rx: str, key: str, flags: int = 0) -> Callable[[list[str]], tuple[str, int, int]]:
    """(most frequent value of `key` among lines matching rx, its count, the total)."""
    r, k = re.compile(rx, flags), re.compile(key)

    def f(lines: list[str]) -> tuple[str, int, int]:
        counts: dict[str, int] = {}
        for s in lines:
            if r.search(s):
                m = k.search(s)
                v = m.group(1) if m else "(none)"
                counts[v] = counts.get(v, 0) + 1
        named = {k: c for k, c in counts.items() if k != "(none)"}
        best = max(named.items(), key=lambda kv: kv[1])
        return best[0], best[1], sum(counts.values())
    return f


def over_of(rx: str, key: str, threshold: int) -> Callable[[list[str]], set[str]]:
    """The values of `key` on more than `threshold` of the lines matching rx."""
    r, k = re.compile(rx), re.compile(key)

    def f(lines: list[str]) -> set[str]:
        counts: dict[str, int] = {}
        for s in lines:
            if r.search(s) and (m := k.search(s)):
                counts[m.group(1)] = counts.get(m.group(1), 0) + 1
        return {v for v, c in counts.items() if c > threshold}
    f.threshold = threshold
    return f


def tie_of(key: str) -> Callable[[list[str]], tuple[set[str], int]]:
    """(every value of `key` on the most lines, that number of lines): a tie has them all."""
    k = re.compile(key)

    def f(lines: list[str]) -> tuple[set[str], int]:
        counts: dict[str, int] = {}
        for s in lines:
            for v in set(k.findall(s)):
                counts[v] = counts.get(v, 0) + 1
        best = max(counts.values())
        return {v for v, c in counts.items() if c == best}, best
    return f


def in_window(time_rx: str, fmt: Callable[[re.Match], str], lo: str, hi: str):
    """Line numbers whose time (written by the file, as `fmt` sorts it) is in [lo, hi]."""
    r = re.compile(time_rx)

    def f(lines: list[str]) -> set[int]:
        out = set()
        for i, s in enumerate(lines, 1):
            m = r.search(s)
            if m and lo <= fmt(m) <= hi:
                out.add(i)
        return out
    return f


def level_events(family: str, levels: str):
    """The LogHub EventIds of lines whose level (or level word) is one of `levels`."""
    import csv

    def f(_lines: list[str]) -> dict[str, set[int]]:
        by: dict[str, set[int]] = {}
        with open(loghub() / f"{family}_2k.log_structured.csv", newline="") as fh:
            for row in csv.DictReader(fh):
                lvl = row.get("Level") or row.get("Type") or ""
                if re.fullmatch(levels, lvl.strip(), re.I):
                    by.setdefault(row["EventId"], set()).add(int(row["LineId"]))
        return by
    return f


def alert_categories(lines: list[str]) -> dict[str, set[int]]:
    """BGL's own labels: the first field of a line is its alert category (`-`: normal)."""
    by: dict[str, set[int]] = {}
    for i, s in enumerate(lines, 1):
        label = s.split(" ", 1)[0]
        if label != "-":
            by.setdefault(label, set()).add(i)
    return by


def alert_lines(lines: list[str]) -> set[int]:
    """BGL's labelled alert lines (first field not `-`): what "every line that reports a
    failure" is scored against, on a copy with the labels stripped."""
    return {i for i, s in enumerate(lines, 1) if not s.startswith("- ")}
