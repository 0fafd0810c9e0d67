"""How a perfect reader answers a counting question *without* rlm's aggregation: from what one
call shows it (the records in a truncated read, the findings in a synthesis prompt). Used by the
oracle for the baselines, so that their numbers are what a perfect model could say from there."""

from __future__ import annotations

import re
from collections import Counter

from evals.sim.key import QuestionKey, SimKey


def record_findings(key: SimKey, qk: QuestionKey, lines: list[tuple[int, str]]) -> list[dict]:
    """Map step: the records of the asked label(s) in a chunk, as findings (a schema allows 3)."""
    rx = re.compile(key.record_pattern or r"$^")
    want = set(qk.agg.get("labels") or [])
    out = []
    for n, t in lines:
        m = rx.search(t)
        rec = key.records.get(m.group(1)) if m else None
        if rec and (not want or rec["label"] in want):
            out.append({"line": n, "claim": f"{m.group(0)} has the label '{rec['label']}'",
                        "quote": m.group(0)})
    return out[:3]


def answer_from(key: SimKey, qk: QuestionKey, text: str) -> dict:
    """Count the records whose ids the call shows (lines or findings), then answer."""
    ids = set(re.findall(key.record_pattern or r"$^", text))
    c = Counter(key.records[i]["label"] for i in ids if i in key.records)
    total = sum(c.values())
    kind, labs = qk.agg["kind"], qk.agg.get("labels") or []
    if kind not in ("count", "most_common", "more", "share"):  # sums, averages, top k, per label
        return {"answer": _by_code_arithmetic(key, ids, text) + f" (counted over the {total} "
                "records shown)", "cites": []}
    if kind == "most_common":
        ans = (f"The most common label is '{c.most_common(1)[0][0]}'." if c else
               "No record was shown.")
    elif kind == "more":
        ans = f"{c[labs[0]] - c[labs[1]]} more records have the label '{labs[0]}' than '{labs[1]}'."
    elif kind == "share":
        ans = f"The share of records with the label '{labs[0]}' is {c[labs[0]] / total if total else 0:.4f}."
    else:
        ans = f"{c[labs[0]]} records have the label '{labs[0]}'."
    return {"answer": ans + f" (counted over the {total} records shown)", "cites": []}


def _by_code_arithmetic(key: SimKey, ids: set[str], text: str) -> str:
    """A perfect reader's arithmetic over the records it was shown (rlm's own aggregate code)."""
    from rlm.pipeline.aggregate import Counted, Tally
    from rlm.pipeline.aggregate_ops import answer

    m = re.search(r"^Question: (.*)$", text, re.M)
    field = next((k.agg.get("field", "label") for q, k in key.questions.items()
                  if m and " ".join(q.split()) == " ".join(m.group(1).split()) and k.agg), "label")
    recs = [Counted(i, 0, key.records[i][field], key.records[i].get("value"), "")
            for i in sorted(ids) if i in key.records]
    if not recs:
        return "No record was shown."
    return answer(m.group(1) if m else "", Tally(records=recs))[0].split("\n\n")[0]
