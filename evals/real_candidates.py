"""Candidate rules scored on a real labelled log (LogHub BGL_2k / Thunderbird_2k).

The first token of each line is the label (`-` normal, else an alert category). It is
stripped; rlm profiles the stripped log exactly as `rlm ask` would, and code scores:

- every rule at line level (the lines of the shapes it picked; the scoring of
  evals/bench_candidates.py, reused);
- the issue's baselines on the same file: "rare + error level" (the old selection: rare
  shapes or error-level shapes) and "severity word alone" (each line whose header has a
  level of error or worse);
- the <= 400 candidate lines handed on: precision, recall, alert categories reached;
- with `ask`, `rlm ask <stripped> "anomalies?" --model none --json` end to end: the alert
  categories its findings cite.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from evals.bench_candidates import old_candidates, score, selected_lines
from rlm.corpus.profile import profile_log
from rlm.corpus.severity import ERROR_RANK, severity
from rlm.corpus.signals import RULES
from rlm.corpus.source import TextSource


def strip_labels(src: Path, dst: Path) -> dict[int, str]:
    """Write the log without its first token; {line number: alert category} for the lines
    whose label is not `-`."""
    alerts: dict[int, str] = {}
    out = []
    for i, line in enumerate(src.read_text(encoding="utf-8").split("\n"), 1):
        label, _, rest = line.partition(" ")
        if label != "-":
            alerts[i] = label
        out.append(rest)
    dst.write_text("\n".join(out) + "\n", encoding="utf-8")
    return alerts


def severity_lines(path: Path) -> set[int]:
    """The "severity word alone" baseline: lines whose header level is error or worse."""
    lines = path.read_text(encoding="utf-8").split("\n")
    return {i for i, s in enumerate(lines, 1) if s and (sev := severity(s)) is not None
            and sev <= ERROR_RANK}


def rule_rows(stripped: Path, prof) -> list[tuple[str, set[int]]]:
    sel = selected_lines(stripped, prof)
    rows = [(r, sel[r]) for r in RULES]
    rows.append(("all rules (union)", set().union(*sel.values())))
    rows.append(("baseline: rare + error level", sel["rare"] | sel["severity"]))
    rows.append(("baseline: severity word alone", severity_lines(stripped)))
    return rows


def ask_categories(stripped: Path, alerts: dict[int, str]) -> dict:
    """`rlm ask ... --model none --json`: which alert categories its findings cite."""
    env = dict(os.environ, RLM_HOME=tempfile.mkdtemp(prefix="rlm-home-"))
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "rlm.cli", "ask", str(stripped), "anomalies?",
                        "--model", "none", "--json", "--quiet"],
                       capture_output=True, text=True, env=env, timeout=600)
    wall = time.perf_counter() - t
    try:
        rep = json.loads(p.stdout)
    except ValueError:
        return {"exit": p.returncode, "error": (p.stderr or p.stdout)[-300:], "wall_s": wall}
    cited: set[int] = set()
    for f in rep.get("findings", []):
        src = f.get("source") or {}
        a, b = src.get("line_start"), src.get("line_end")
        if a and b:
            cited.update(range(a, b + 1))
    cats = sorted({alerts[ln] for ln in cited if ln in alerts})
    return {"exit": p.returncode, "strategy": rep.get("strategy"), "findings":
            len(rep.get("findings", [])), "cited_lines": len(cited),
            "cited_alert_lines": len(cited & set(alerts)), "categories": cats, "wall_s": wall}


def _row(name: str, p: float, r: float, n: int, reached: int, cats: int) -> str:
    if not cats:  # no alert lines: precision and recall are undefined
        return f"{name:<34} {'-':>9} {'-':>7} {n:>6,}  -"
    return f"{name:<34} {p:>9.2f} {r:>7.2f} {n:>6,}  {reached}/{cats}"


def report_candidates(family: str, path: Path, ask: bool = False) -> dict:
    d = Path(tempfile.mkdtemp(prefix="rlm-loghub-"))
    stripped = d / f"{family}_2k.stripped.log"
    alerts = strip_labels(path, stripped)
    cats_all = sorted(set(alerts.values()))
    alert_set = set(alerts)
    t = time.perf_counter()
    with TextSource(stripped) as src:
        prof = profile_log(src)
    wall = time.perf_counter() - t
    print(f"{family}_2k (real, labelled): {prof.lines:,} lines, {len(alerts)} alert lines in "
          f"{len(cats_all)} categories; rare_max {prof.rare_max}; profile {wall:.2f}s")
    print(f"{'rule or set':<34} {'precision':>9} {'recall':>7} {'lines':>6}  categories")
    out: dict = {"family": family, "alert_lines": len(alerts), "categories": len(cats_all),
                 "rows": {}}
    for name, s in rule_rows(stripped, prof):
        p, r, n = score(s, alert_set)
        reached = {alerts[ln] for ln in s if ln in alerts}
        out["rows"][name] = {"precision": p, "recall": r, "lines": n, "cats": len(reached)}
        print(_row(name, p, r, n, len(reached), len(cats_all)))
    for name, cand in (("candidates handed on (<= 400)", set(prof.candidates)),
                       ("old candidates (rarest, then error)", old_candidates(prof))):
        p, r, n = score(cand, alert_set)
        reached = {alerts[ln] for ln in cand if ln in alerts}
        out["rows"][name] = {"precision": p, "recall": r, "lines": n, "cats": len(reached)}
        print(_row(name, p, r, n, len(reached), len(cats_all)))
    if not alerts:
        print("(no alert lines in this sample: precision and recall are undefined, and every "
              "line a rule picks is a false alarm by the labels)")
    missed = sorted(set(cats_all) - {alerts[ln] for ln in prof.candidates if ln in alerts})
    print(f"alert categories the candidates miss: {', '.join(missed) or 'none'}")
    if ask:
        res = ask_categories(stripped, alerts)
        out["ask"] = res
        print(f"rlm ask {stripped.name} \"anomalies?\" --model none --json: {json.dumps(res)}")
    return out
