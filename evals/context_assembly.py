"""Context assembly, measured: the same facts in a clean prompt vs buried in an agent transcript.

For each revised-value question of the transcript fixture (three topics; each value changes
twice and only the last one is right), the facts are the topic's value lines plus the
distractors about that topic, in file order. Two layouts, same system instructions, same
question, same schema, same facts:

- **clean**: rlm's synthesis layout: one user message with the question, then the facts as
  numbered findings, nothing else;
- **buried**: the facts spread over an accumulated session: earlier tool calls with raw output
  (log lines, `sed -n` excerpts of the transcript around each fact, `wc`/`ls` output) and
  earlier model replies to unrelated questions, then the question as the last message.

Scored by code: correct when the final value is stated in the answer (``value_in_text``);
``stale`` when only an earlier value is.
"""

from __future__ import annotations

import json
import random
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from evals.scoring import value_in_text
from rlm.prompts import recipe
from rlm.engine.budget import Budget
from rlm.engine.call import call_json
from rlm.errors import BudgetExhausted, ModelCallError
from rlm.models.base import Limits, Model


@dataclass
class Item:
    seed: int
    topic: str
    question: str
    facts: list[tuple[int, str]]  # (line, text), file order
    final: str
    earlier: list[str]
    context_lines: dict[int, str] = field(default_factory=dict)  # the transcript, for excerpts


def build_items(seeds: list[int], workdir: Path, lines: int = 600) -> list[Item]:
    from rlm.fixtures.transcript import write_transcript

    items = []
    for seed in seeds:
        p = workdir / f"ca-transcript-{seed}.txt"
        key = write_transcript(p, lines=lines, seed=seed)
        text = p.read_text().splitlines()
        planted = {s["line"] for s in key["story"]} | {d["line"] for d in key["distractors"]}
        planted |= {v["line"] for r in key["revisions"] for v in r["values"]}
        for rev in key["revisions"]:
            facts = [(v["line"], v["text"]) for v in rev["values"]]
            facts += [(d["line"], d["text"]) for d in key["distractors"] if d["about"] == rev["topic"]]
            facts.sort()
            ctx = {i: t for i, t in enumerate(text, 1) if i not in planted or i in dict(facts)}
            items.append(Item(seed, rev["topic"], rev["question"], facts, rev["final"],
                              [v["value"] for v in rev["values"][:-1]], ctx))
    return items


def clean_messages(item: Item, path: str = "meeting.txt") -> list[dict]:
    material = "\n".join(f"[{i}] {t} ({path}:{ln}-{ln})" for i, (ln, t) in enumerate(item.facts, 1))
    return recipe.messages("giant-file", "synth", question=item.question, note="", material=material)


def _log_lines(rng: random.Random, n: int) -> list[str]:
    svcs = ("gateway", "checkout", "catalog", "billing", "search")
    out = []
    for _ in range(n):
        out.append(f"2026-03-14T08:{rng.randrange(60):02d}:{rng.randrange(60):02d}."
                   f"{rng.randrange(1000):03d}Z {rng.choice(('INFO ', 'DEBUG', 'WARN '))} "
                   f"[{rng.choice(svcs)}] req={rng.getrandbits(32):08x} GET /v1/items "
                   f"status=200 {rng.randrange(3, 400)}ms")
    return out


_EARLIER_QUESTIONS = (
    ("Which services log the most warnings?", "Most WARN lines come from checkout and billing."),
    ("Is the printer on the third floor fixed?", "It is still waiting on a reply from IT."),
    ("When is the design review?", "The design review was moved to Thursday."),
    ("Who owns the on-call handbook?", "Nobody has taken ownership of the on-call handbook yet."),
    ("What is blocking the vendor questionnaire?", "The vendor questionnaire is blocked on legal."),
)


def buried_messages(item: Item, model: Model, target_tokens: int, seed: int = 1,
                    path: str = "meeting.txt") -> list[dict]:
    """The clean prompt's system text, then an accumulated session in which the facts appear
    inside raw tool output among unrelated earlier results, then the question."""
    rng = random.Random(f"buried-{item.seed}-{item.topic}-{seed}")
    system = recipe.messages("giant-file", "synth", question="", note="", material="")[0]
    final_q = {"role": "user", "content": f"Question: {item.question}\nAnswer from the tool "
               "results above. Reply with JSON only: answer, cites (line numbers)."}
    fixed = model.count_tokens(system["content"]) + model.count_tokens(final_q["content"])
    n_turn = len(item.facts) + 3
    per_turn = max(120, (target_tokens - fixed) // (2 * n_turn))

    def excerpt(center: int) -> str:
        lo = max(1, center - rng.randrange(6, 30))
        out, used, ln = [], 0, lo
        while used < per_turn and ln in item.context_lines:
            s = f"{ln}\t{item.context_lines[ln]}"
            out.append(s)
            used += model.count_tokens(s) + 1
            ln += 1
        if center not in range(lo, ln):  # the fact must be in its excerpt
            out.append(f"{center}\t{item.context_lines[center]}")
        return f"$ sed -n {lo},{ln}p {path}\n" + "\n".join(out)

    def logs() -> str:
        lines, used = [], 0
        while used < per_turn:
            s = _log_lines(rng, 1)[0]
            lines.append(s)
            used += model.count_tokens(s) + 1
        return "$ grep -n WARN service.log | head\n" + "\n".join(lines)

    def earlier_answer() -> tuple[str, str]:
        q, a = rng.choice(_EARLIER_QUESTIONS)
        return q, json.dumps({"answer": a, "cites": sorted(rng.sample(range(1, 900), 2))})

    turns: list[dict] = [system]
    turns += [{"role": "user", "content": "Tool output:\n$ ls -la\n-rw-r--r-- 1 app app 48213 "
                                          f"{path}\n-rw-r--r-- 1 app app 51093400 service.log\n"
                                          f"$ wc -l {path} service.log"},
              {"role": "assistant", "content": "I will look at the log first."},
              {"role": "user", "content": "Tool output:\n" + logs()}]
    for ln, _ in item.facts:
        q, a = earlier_answer()
        turns += [{"role": "assistant", "content": f"Now checking: {q}"},
                  {"role": "user", "content": "Tool output:\n" + excerpt(ln)},
                  {"role": "assistant", "content": a},
                  {"role": "user", "content": "Tool output:\n" + logs()}]
    turns += [{"role": "assistant", "content": "Done with the earlier checks."}, final_q]
    return turns


@dataclass
class LayoutResult:
    layout: str
    correct: int = 0
    stale: int = 0
    total: int = 0
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    wall_s: float = 0.0
    errors: int = 0
    details: list[dict] = field(default_factory=list)


async def run_context_assembly(model: Model, items: list[Item], buried_tokens: int,
                               timeout: float = 300.0) -> list[LayoutResult]:
    from rlm.schemas.calls import AnswerResult

    t = recipe.task("giant-file", "synth")
    results = []
    for layout in ("clean", "buried"):
        res = LayoutResult(layout)
        budget = Budget()
        t0 = time.monotonic()
        for it in items:
            msgs = clean_messages(it) if layout == "clean" else buried_messages(it, model, buried_tokens)
            answer, err = "", None
            try:
                out, _ = await call_json(model, msgs, AnswerResult,
                                         Limits(max_tokens=t["max_tokens"], timeout=timeout), budget)
                answer = out.answer
            except (ModelCallError, BudgetExhausted) as e:
                err = getattr(e, "reason", str(e))
                res.errors += 1
            ok = value_in_text(it.final, answer)
            stale = (not ok) and any(value_in_text(v, answer) for v in it.earlier)
            res.total += 1
            res.correct += ok
            res.stale += stale
            res.details.append({"seed": it.seed, "topic": it.topic, "final": it.final,
                                "correct": ok, "stale": stale, "answer": answer[:300],
                                "error": err,
                                "prompt_tokens_est": sum(model.count_tokens(m["content"])
                                                         for m in msgs)})
        u = budget.usage
        res.calls, res.prompt_tokens, res.completion_tokens = u.calls, u.prompt_tokens, u.completion_tokens
        res.wall_s = round(time.monotonic() - t0, 1)
        results.append(res)
    return results


def workdir() -> Path:
    return Path(tempfile.mkdtemp(prefix="rlm-ca-"))
