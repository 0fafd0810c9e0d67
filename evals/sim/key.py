"""The answer key a simulated reader reads: what is relevant to each question, found by text.

A key is plain JSON, so the CLI can hand one over (``--model 'sim:oracle?key=PATH'``)::

    {"questions": {"<question>": {"items": [Item...], "answer": "last" | "all" | "<text>"}},
     "records": {"<record id>": {"label": "...", "value": 12}},   # aggregation fixtures
     "record_pattern": "<regex with the record id as group 1>",
     "instructions": ["<planted instruction text>", ...]}          # adversarial fixtures

An item is ``{"match": "<exact text of (part of) the relevant line>", "claim": "...",
"label": "...", "value": "..."}``. Readers find items by *text* in the numbered lines of a
prompt, never by line number: if rlm showed a line under the wrong number, the oracle cites the
wrong number and the evidence check says so.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

_QUESTION = re.compile(r"^Question: (.*)$", re.M)


@dataclass
class Item:
    match: str
    claim: str
    label: str | None = None
    value: str | None = None
    order: int = 0  # position in the key (for "last": the latest revision)


@dataclass
class QuestionKey:
    items: list[Item]
    answer: str = "all"  # "all": every item present; "last": the latest present item's value
    agg: dict | None = None  # counting questions: {"kind", "labels"}; answered from the records


@dataclass
class SimKey:
    questions: dict[str, QuestionKey] = field(default_factory=dict)
    records: dict[str, dict] = field(default_factory=dict)
    record_pattern: str | None = None
    instructions: list[str] = field(default_factory=list)

    def for_prompt(self, text: str) -> QuestionKey | None:
        """The question a prompt asks (its "Question:" line), looked up in the key."""
        m = _QUESTION.search(text)
        q = " ".join(m.group(1).split()) if m else ""
        norm = {" ".join(k.split()): v for k, v in self.questions.items()}
        if q in norm:
            return norm[q]
        if len(self.questions) == 1:
            return next(iter(self.questions.values()))
        return None

    def to_json(self) -> dict:
        return {"questions": {q: {"items": [vars(i) for i in k.items], "answer": k.answer,
                                  "agg": k.agg}
                              for q, k in self.questions.items()},
                "records": self.records, "record_pattern": self.record_pattern,
                "instructions": self.instructions}

    @classmethod
    def from_json(cls, d: dict) -> "SimKey":
        qs = {q: QuestionKey([Item(**i) for i in k["items"]], k.get("answer", "all"), k.get("agg"))
              for q, k in (d.get("questions") or {}).items()}
        return cls(qs, d.get("records") or {}, d.get("record_pattern"), d.get("instructions") or [])


def _items(rows: list[tuple[str, str, str | None, str | None]]) -> list[Item]:
    return [Item(m, c, lab, val, i) for i, (m, c, lab, val) in enumerate(rows)]


def _strip_ts(text: str) -> str:
    return re.sub(r"^\S*\d\d:\d\d:\d\d\S*\s+", "", text).strip()


LOG_LABELS = {"panic": "error", "config_override": "config", "session": "session"}


def from_log(truth: dict) -> SimKey:
    """Log fixture: "anomalies?" -> the 12 needles; "what happened to TXN-…?" -> its panic."""
    needles = truth["needles"]
    rows = [(n["text"], _strip_ts(n["text"])[:150], LOG_LABELS.get(n["kind"]), n["id"])
            for n in needles]
    k = SimKey({"anomalies?": QuestionKey(_items(rows))})
    for txn in truth["txn_ids"]:
        mine = [r for r in rows if txn in r[0]]
        k.questions[f"what happened to {txn}?"] = QuestionKey(_items(mine))
    return k


def from_transcript(truth: dict) -> SimKey:
    """Transcript fixture: the story question (5 pieces) and each revised value (latest wins)."""
    story = [(s["text"], f"{s['label']}: {s['text'][11:160]}"[:155], None, s["label"])
             for s in truth["story"]]
    k = SimKey({truth["questions"]["story"]: QuestionKey(_items(story), "all")})
    for rev in truth["revisions"]:
        rows = [(v["text"], f"{rev['topic']} set to {v['value']}: {v['text'][11:120]}"[:155],
                 None, v["value"]) for v in rev["values"]]
        k.questions[rev["question"]] = QuestionKey(_items(rows), "last")
    return k


def from_notes(truth: dict, question: str) -> SimKey:
    return SimKey({question: QuestionKey(_items([(truth["text"], truth["text"][2:150], None,
                                                  truth["value"])]), "last")})


def from_repo(truth: dict) -> SimKey:
    """Repository fixture (requirements mining): each fact's question -> the line holding its
    quote in its file (the item's label is the path); unanswerable questions -> nothing."""
    k = SimKey({f["question"]: QuestionKey(_items([(f["quote"], f["claim"][:118], f["path"],
                                                    None)])) for f in truth["facts"]})
    for q in truth["unanswerable_questions"]:
        k.questions[q] = QuestionKey([])
    return k


def audit_key(truth: dict) -> SimKey:
    """Repository fixture (audit): one key for every prompt (audit prompts ask no question);
    items are the planted facts, found by their quote in their file."""
    return SimKey({"audit": QuestionKey(_items([(f["quote"], f["claim"][:118], f["path"], None)
                                                for f in truth["facts"]]))})


def from_truth(truth: dict, question: str | None = None) -> SimKey:
    """A key from a fixture's answer key (``*.truth.json``), whatever generator wrote it."""
    gen = truth.get("generator")
    if "questions" in truth and isinstance(truth["questions"], dict) and gen is None:
        return SimKey.from_json(truth)  # already a simulator key
    if gen == "log":
        return from_log(truth)
    if gen == "transcript":
        return from_transcript(truth)
    if gen == "repo":
        return from_repo(truth)
    if gen in ("sniah", "oolong"):
        return SimKey.from_json(truth["sim_key"])
    if gen == "notes":
        return from_notes(truth, question or truth["question"])
    raise ValueError(f"no simulator key for answer keys of generator {gen!r}")


def load(path: str | Path) -> SimKey:
    return from_truth(json.loads(Path(path).read_text("utf-8")))
