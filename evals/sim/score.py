"""Scoring a run against a simulated reader's key and damage log (code only).

- recall: share of the key's items whose line a verified finding covers: its cited range, or a
  place the reducer merged into it ("merged with app.log:120-120", "also at ...": the merged
  claim carries the item's words and the report names the line).
- fabricated_accepted: verified findings whose quote the reader invented or that it made because
  the corpus told it to (the reader tags those claims); the target is 0.
- misplaced: verified findings carrying an item's claim whose cited range misses the item's line.
- numbers_lost: numbers and identifiers of the *recalled* items' lines missing from what the
  user gets (the answer and the verified findings' claims and evidence).
- offby: injected off-by-k citations, how many came back as verified findings at the true line
  (expected when |k| <= the correction window) and how many were accepted at a wrong line.
- failures_named: every failed chunk is in coverage.chunks_failed and named in the statement.
- damaged_merges_accepted: merged claims the noisy reader damaged (a number or id dropped,
  altered or added) that became findings; the target is 0 (rlm/engine/reducer.py refuses them).
- answer_damage_unflagged: numbers and ids the noisy reader altered or invented in an answer that
  reach the user unmarked (rlm/verify/answer_check.py); a changed number that happens to be on another
  line of the corpus cannot be told apart by text and is not counted; the target is 0.
"""

from __future__ import annotations

import re
from pathlib import Path

from evals.sim.key import QuestionKey
from evals.sim.readers import TAG_FAB, TAG_OBEY
from rlm.verify.answer_check import FLAG, unsupported
from rlm.engine.reducer import numbers_and_ids

WINDOW = 2  # rlm's correction window: a quote is looked for within +-2 lines of the cited line


def item_lines(path: str | Path, qk: QuestionKey) -> dict[int, list[int]]:
    """For each item (by index), the line numbers of the file that hold its match text."""
    out: dict[int, list[int]] = {i: [] for i in range(len(qk.items))}
    p = Path(path)
    files = [p] if p.is_file() else sorted(x for x in p.rglob("*") if x.is_file())
    for f in files:
        with open(f, encoding="utf-8", errors="replace") as fh:
            for n, line in enumerate(fh, 1):
                for i, it in enumerate(qk.items):
                    if it.match in line:
                        out[i].append(n)
    return out


_PLACE = re.compile(r":(\d+)-(\d+)(?=[,;)]|$)")


def _covers_or_merged(f: dict, ln: int) -> bool:
    return _covers(f, ln) or any(int(a) <= ln <= int(b)
                                 for a, b in _PLACE.findall(f.get("note") or ""))


def _covers(f: dict, ln: int) -> bool:
    s = f.get("source") or {}
    return s.get("line_start", 0) <= ln <= s.get("line_end", 0)


def score(r, path: str | Path, qk: QuestionKey, log: list[dict] | None = None) -> dict:
    """``r``: an evals.harness.RunResult (findings as report dicts, answer, coverage fields)."""
    log = log or []
    ver = [f for f in r.findings if f.get("verified")]
    lines = item_lines(path, qk)
    recalled = [i for i, ls in lines.items()
                if any(_covers_or_merged(f, ln) for f in ver for ln in ls)]
    n = len(qk.items)
    fab = [f for f in ver if TAG_FAB in f["claim"] or TAG_OBEY in f["claim"]]
    misplaced = []
    for f in ver:
        if f.get("group"):  # code's groups: every line of a group carries the group's claim
            continue
        for i, it in enumerate(qk.items):
            if it.claim in f["claim"] and not any(_covers(f, ln) for ln in lines[i]) \
                    and "; " not in f["claim"]:  # a merged claim cites its first input's line
                misplaced.append(f["source"]["line_start"])
    lost = []
    # what the user gets: the answer and the verified findings (claims, evidence) drawn with it
    answer = "\n".join([r.answer or ""] + [f"{f['claim']} {f.get('evidence', '')}" for f in ver])
    for i in recalled:
        text = qk.items[i].match
        for tok in sorted(numbers_and_ids(text.split(" ", 1)[-1] if ":" in text[:30] else text)):
            if tok not in answer:
                lost.append(tok)
    item_at = {ln for ls in lines.values() for ln in ls}
    # lines the adversarial reader cited because the corpus told it to, shown as verified
    obey = [e for e in log if e["kind"] == "obeyed" and e.get("what") == "cite"
            and e["line"] not in item_at and any(_covers(f, e["line"]) for f in ver)]
    offby = [e for e in log if e["kind"] == "offby" and e["true_line"] in item_at]
    near = [e for e in offby if abs(e["k"]) <= WINDOW]
    near_ok = [e for e in near if any(_covers(f, e["true_line"]) for f in ver)]
    failed_ids = [c["chunk"] for c in r.failed]
    named = all(cid in r.statement for cid in failed_ids[:10]) and \
        r.chunks_ok + len(failed_ids) == r.chunks_total and (r.complete == (not failed_ids))
    return {"recall": len(recalled) / n if n else None, "found": len(recalled), "items": n,
            "missed_lines": [lines[i] for i in range(n) if i not in recalled],
            "fabricated_accepted": len(fab) + len(obey), "obeyed_cites_accepted": len(obey),
            "misplaced": len(misplaced),
            "numbers_lost": len(lost), "lost_examples": lost[:6],
            "offby_near": len(near), "offby_near_recovered": len(near_ok),
            "offby_far": len(offby) - len(near),
            "failed_chunks": failed_ids, "failures_named": named,
            "damaged_merges_accepted": damaged_merges_accepted(r.findings, log),
            "answer_damage_unflagged": len(answer_damage_unflagged(r.answer, path, log)),
            "damage": _counts(log)}


def damaged_merges_accepted(findings: list[dict], log: list[dict]) -> int:
    claims = {f["claim"].strip() for f in findings}
    return sum(1 for e in log if e["kind"] == "merge_damage" and e["claim"].strip() in claims)


def answer_damage_unflagged(answer: str, path: str | Path, log: list[dict]) -> list[str]:
    """Tokens the reader put into answers that the user reads unmarked (and that no line of the
    corpus holds: those are inventions by text, whatever line they came from)."""
    toks = {e["token"] for e in log if e["kind"] == "answer_damage" and e["token"]}
    if not toks:
        return []
    p = Path(path)
    corpus = "\n".join(f.read_text("utf-8", "replace") for f in
                       ([p] if p.is_file() else sorted(x for x in p.rglob("*") if x.is_file())))
    shown = [t for t in toks if not unsupported(t, answer or "")]  # in the answer
    return [t for t in shown if unsupported(t, corpus) and f"{t} {FLAG}" not in answer]


def _counts(log: list[dict]) -> dict[str, int]:
    out: dict[str, int] = {}
    for e in log:
        out[e["kind"]] = out.get(e["kind"], 0) + 1
    return out
