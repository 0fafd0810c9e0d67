"""`rlm calibrate`: measure how a model's accuracy falls as its prompt fills, and keep a profile.

Two tasks, scored by code (never by a model):
- **needle**: one fact (a door code) somewhere in routine meeting talk; correct when the answer
  holds the code;
- **synthesis**: three facts about one offsite (city, hotel rooms, start date) spread through the
  text at about 1/6, 1/2 and 5/6 of its depth; correct only when the answer holds all three.

Each task runs at increasing fill levels (the prompt's share of the model's context, up to what
still leaves room for the answer), a few repetitions each, with the fact(s) at different depths.
The prompt has the same clean layout as every sub-call of rlm: instructions first, then the
question, then only the material.

The profile (JSON, in ``<user config dir>/profiles/``; env ``RLM_CONFIG_DIR`` overrides the
directory) keeps the curve and two breakpoints. A breakpoint is the largest fill level whose
accuracy is >= 90% *and* every smaller level's too (before the first level that falls below 90%:
a lucky pass after a failure does not count). The usable window for one call is 80% of the
synthesis breakpoint, in prompt tokens; the gate and the chunker use it when a profile for the
model exists (see ``profile_window``) and say so in the gate's reasons.
"""

from __future__ import annotations

import json
import os
import random
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import anyio
from pydantic import BaseModel, ConfigDict, Field

from rlm.engine.budget import Budget
from rlm.engine.call import call_json
from rlm.errors import BudgetExhausted, ModelCallError
from rlm.models.base import Limits, Model

CONFIG_ENV = "RLM_CONFIG_DIR"
PROFILE_VERSION = 1
THRESHOLD = 0.9  # accuracy a fill level needs to count as usable
WINDOW_SHARE = 0.8  # usable window = this share of the synthesis breakpoint
DEFAULT_LEVELS = (0.1, 0.25, 0.4, 0.55, 0.7, 0.85, 0.97)
QUICK_LEVELS = (0.1, 0.4, 0.7, 0.97)
DEFAULT_REPS = 3
ANSWER_MAX_TOKENS = 120
_HEADROOM = 96  # tokens kept free besides the answer (chat template, rounding)

SYSTEM = ("You answer a question about a meeting transcript. Use only the transcript. "
          "Reply with JSON only: answer (at most 40 words, keep numbers and names exactly).")


class CalibAnswer(BaseModel):
    """A short free answer; scoring is done by code on its text."""

    model_config = ConfigDict(extra="forbid")
    answer: str = Field(max_length=300)


# ------------------------------------------------------------------------------ profile files

def config_dir() -> Path:
    v = os.environ.get(CONFIG_ENV, "").strip()
    if v:
        return Path(v).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir("rlm", appauthor=False))


def _slug(name: str) -> str:
    s = re.sub(r"[^A-Za-z0-9._-]+", "_", name.strip())[:120].strip("._")
    return s or "model"


def profile_path(model_name: str) -> Path:
    return config_dir() / "profiles" / f"{_slug(model_name)}.json"


def load_profile(model_name: str) -> dict | None:
    """The saved profile for this model name, or None (missing or unreadable)."""
    p = profile_path(model_name)
    try:
        data = json.loads(p.read_text("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("model") != model_name:
        return None
    data["_path"] = str(p)
    return data


def save_profile(profile: dict) -> Path:
    p = profile_path(profile["model"])
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_suffix(".json.tmp")
    tmp.write_text(json.dumps({k: v for k, v in profile.items() if not k.startswith("_")},
                              indent=2) + "\n", "utf-8")
    tmp.replace(p)
    return p


def profile_window(model_name: str, context_tokens: int) -> tuple[int | None, str] | None:
    """(usable prompt tokens per call, a reason line) from the model's profile; None without one.

    The window is None when the profile has none (synthesis never reached 90%): the caller keeps
    its default and the reason line says why."""
    prof = load_profile(model_name) if model_name else None
    if prof is None:
        return None
    where = prof.get("_path", "")
    when = str(prof.get("created", ""))[:10]
    win = prof.get("usable_window_tokens")
    if not isinstance(win, int) or win <= 0:
        return None, (f"calibrated profile {where} ({when}): synthesis never reached "
                      f"{THRESHOLD:.0%} accuracy at any fill tested, so the default window is kept")
    win = min(win, int(context_tokens * 0.97))
    bp = (prof.get("synthesis_breakpoint") or {}).get("tokens")
    return win, (f"calibrated profile {where} ({when}): usable window {win:,} prompt tokens per "
                 f"call = {WINDOW_SHARE:.0%} of the synthesis breakpoint ({bp:,} tokens)")


# ------------------------------------------------------------------------------ tasks

_COLORS = ("blue", "green", "amber", "violet", "silver", "crimson", "teal", "orange")
_CITIES = ("Porto", "Ghent", "Bergen", "Lyon", "Tallinn", "Bologna", "Krakow", "Aarhus", "Seville")
_PROJECTS = ("Heron", "Juniper", "Falcon", "Marigold", "Quartz", "Willow", "Cobalt", "Lantern")
_MONTHS = ("March", "April", "May", "June", "September", "October")


@dataclass
class Trial:
    task: str  # needle | synthesis
    level: float  # target fill, share of the context
    rep: int
    target_tokens: int
    question: str = ""
    facts: list[str] = field(default_factory=list)  # the planted lines
    expected: list[str] = field(default_factory=list)  # strings the answer must hold
    messages: list[dict] = field(default_factory=list)
    prompt_tokens: int = 0
    answer: str = ""
    correct: bool = False
    error: str | None = None


def _filler_line(rng: random.Random) -> str:
    from rlm.fixtures.transcript import PREDICATES, SHORT, SPEAKERS, SUBJECTS

    who = rng.choice(SPEAKERS)
    if rng.random() < 0.25:
        return f"{who}: {rng.choice(SHORT)}"
    return f"{who}: {rng.choice(SUBJECTS)} {rng.choice(PREDICATES)}."


def _facts(task: str, rng: random.Random) -> tuple[str, list[str], list[str]]:
    """(question, planted lines, expected answer strings)."""
    from rlm.fixtures.transcript import SPEAKERS

    if task == "needle":
        color, code = rng.choice(_COLORS), str(rng.randrange(1000, 10000))
        return (f"What is the door code for the {color} storage room?",
                [f"{rng.choice(SPEAKERS)}: The door code for the {color} storage room is {code}."],
                [code])
    proj, city = rng.choice(_PROJECTS), rng.choice(_CITIES)
    rooms, month, day = str(rng.randrange(12, 90)), rng.choice(_MONTHS), rng.randrange(2, 28)
    date = f"{month} {day}"
    return (f"For the {proj} offsite: in which city is it held, how many hotel rooms are booked, "
            f"and on what date does it start?",
            [f"{rng.choice(SPEAKERS)}: The {proj} offsite will be held in {city}.",
             f"{rng.choice(SPEAKERS)}: For the {proj} offsite we booked {rooms} hotel rooms.",
             f"{rng.choice(SPEAKERS)}: The {proj} offsite starts on {date}."],
            [city, rooms, date])


def _depths(task: str, rep: int, reps: int) -> list[float]:
    t = 0.5 if reps <= 1 else rep / (reps - 1)
    if task == "needle":
        return [0.1 + 0.8 * t]
    j = 0.08 * (t - 0.5)
    return [1 / 6 + j, 0.5 + j, 5 / 6 + j]


def build_trial(model: Model, task: str, level: float, rep: int, reps: int,
                target_tokens: int, seed: int = 7) -> Trial:
    """A prompt of about target_tokens with the task's fact(s) planted at their depths."""
    rng = random.Random(f"calibrate-{seed}-{task}-{level:.3f}-{rep}")
    q, facts, expected = _facts(task, rng)
    head = [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"Question: {q}\nTranscript:\n"}]
    budget = target_tokens - sum(model.count_tokens(m["content"]) for m in head) - 8
    lines: list[str] = []
    used = sum(model.count_tokens(f) + 1 for f in facts)
    while True:
        ln = _filler_line(rng)
        c = model.count_tokens(ln) + 1
        if used + c > budget and len(lines) > len(facts):
            break
        lines.append(ln)
        used += c
    for d, fact in zip(_depths(task, rep, reps), facts):
        lines.insert(min(len(lines), max(0, int(d * len(lines)))), fact)
    text = "\n".join(lines)
    # tokens of the joined text may differ a little from the sum: trim filler from the end
    used = model.count_tokens(text)
    while used > budget and len(lines) > len(facts) + 1:
        k = next(i for i in range(len(lines) - 1, -1, -1) if lines[i] not in facts)
        del lines[k]
        text = "\n".join(lines)
        used = model.count_tokens(text)
    msgs = [head[0], {"role": "user", "content": head[1]["content"] + text}]
    tr = Trial(task=task, level=level, rep=rep, target_tokens=target_tokens, question=q,
               facts=facts, expected=expected, messages=msgs)
    tr.prompt_tokens = sum(model.count_tokens(m["content"]) for m in msgs)
    return tr


def score_answer(answer: str, expected: list[str]) -> bool:
    """Every expected string in the answer (case-insensitive; numbers as whole numbers)."""
    a = " ".join(answer.lower().split())
    for e in expected:
        e = e.lower()
        if e.isdigit():
            if not re.search(rf"(?<![\d,]){e}(?![\d,])", a.replace(",", "")):
                return False
        elif e not in a:
            return False
    return True


# ------------------------------------------------------------------------------ the run

def levels_tokens(context_tokens: int, levels: list[float]) -> list[tuple[float, int]]:
    """Fill levels as (share, prompt tokens), capped so the answer still fits the context."""
    cap = context_tokens - ANSWER_MAX_TOKENS - _HEADROOM
    out = []
    for lv in sorted(set(levels)):
        if not 0 < lv <= 1:
            raise ValueError(f"fill level {lv} is not in (0, 1]")
        out.append((lv, max(64, min(cap, int(lv * context_tokens)))))
    return out


def breakpoint(curve: list[dict], key: str) -> dict | None:
    """Largest level with accuracy >= THRESHOLD such that every smaller level also made it."""
    best = None
    for row in sorted(curve, key=lambda r: r["level"]):
        if row[key] is None or row[key] < THRESHOLD:
            break
        best = {"level": row["level"], "tokens": row["tokens"], "accuracy": row[key]}
    return best


async def run_calibration(model: Model, levels: list[float] | None = None, reps: int = DEFAULT_REPS,
                          timeout: float = 120.0, concurrency: int = 1, seed: int = 7,
                          on_trial: Callable[[Trial], None] | None = None) -> dict:
    """Run both tasks at every level; return the profile (not yet saved)."""
    from rlm.engine.mapper import map_items

    t0 = time.monotonic()
    lv = levels_tokens(model.context_tokens, list(levels or DEFAULT_LEVELS))
    reps = max(1, int(reps))
    trials = [build_trial(model, task, level, rep, reps, tok, seed)
              for level, tok in lv for task in ("needle", "synthesis") for rep in range(reps)]
    budget = Budget()

    async def work(tr: Trial) -> Trial:
        try:
            res, _ = await call_json(model, tr.messages, CalibAnswer,
                                     Limits(max_tokens=ANSWER_MAX_TOKENS, timeout=timeout),
                                     budget, attempts=2)
            tr.answer = res.answer
            tr.correct = score_answer(res.answer, tr.expected)
        except (ModelCallError, BudgetExhausted) as e:
            tr.error = getattr(e, "reason", str(e))
        return tr

    def done(o) -> None:
        tr = o.item
        if not o.ok and tr.error is None:
            tr.error = o.error
        if on_trial:
            on_trial(tr)

    await map_items(trials, work, key=lambda t: f"{t.task}-{t.level}-{t.rep}",
                    concurrency=concurrency, budget=budget, on_outcome=done)
    curve = []
    for level, tok in lv:
        row: dict = {"level": level, "tokens": tok}
        for task in ("needle", "synthesis"):
            ts = [t for t in trials if t.task == task and t.level == level]
            row[task] = sum(t.correct for t in ts) / len(ts) if ts else None
            row[f"{task}_prompt_tokens"] = round(sum(t.prompt_tokens for t in ts) / max(1, len(ts)))
            row[f"{task}_errors"] = sum(1 for t in ts if t.error)
        curve.append(row)
    nb, sb = breakpoint(curve, "needle"), breakpoint(curve, "synthesis")
    u = budget.usage
    return {
        "version": PROFILE_VERSION,
        "model": model.name,
        "context_tokens": model.context_tokens,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "reps": reps,
        "threshold": THRESHOLD,
        "curve": curve,
        "needle_breakpoint": nb,
        "synthesis_breakpoint": sb,
        "usable_window_tokens": int(sb["tokens"] * WINDOW_SHARE) if sb else None,
        "usage": {"calls": u.calls, "prompt_tokens": u.prompt_tokens,
                  "completion_tokens": u.completion_tokens,
                  "wall_s": round(time.monotonic() - t0, 1)},
        "trials": [{"task": t.task, "level": t.level, "rep": t.rep, "prompt_tokens": t.prompt_tokens,
                    "expected": t.expected, "answer": t.answer[:200], "correct": t.correct,
                    "error": t.error} for t in trials],
    }


def calibrate(model: Model, levels: list[float] | None = None, reps: int = DEFAULT_REPS,
              timeout: float = 120.0, concurrency: int = 1, save: bool = True,
              on_trial: Callable[[Trial], None] | None = None) -> dict:
    prof = anyio.run(lambda: run_calibration(model, levels, reps, timeout, concurrency,
                                             on_trial=on_trial))
    if save:
        prof["_path"] = str(save_profile(prof))
    return prof


# ------------------------------------------------------------------------------ rendering

def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x:.0%}"


def curve_table(prof: dict) -> str:
    """The curve as a plain-text table (also valid Markdown)."""
    rows = ["| fill | prompt tokens | needle | synthesis |", "|---:|---:|---:|---:|"]
    for r in prof["curve"]:
        err = ""
        if r.get("needle_errors") or r.get("synthesis_errors"):
            err = f" ({r.get('needle_errors', 0) + r.get('synthesis_errors', 0)} failed calls)"
        rows.append(f"| {r['level']:.0%} | {r['tokens']:,} | {_pct(r['needle'])} | "
                    f"{_pct(r['synthesis'])}{err} |")
    return "\n".join(rows)


def summary_lines(prof: dict) -> list[str]:
    def bp(b):
        return "none (below 90% already at the smallest fill)" if not b else \
            f"{b['level']:.0%} fill = {b['tokens']:,} tokens ({b['accuracy']:.0%})"

    out = [f"model {prof['model']}, context {prof['context_tokens']:,} tokens, "
           f"{prof['reps']} repetition(s) per level, {prof['usage']['calls']} calls, "
           f"{prof['usage']['wall_s']}s",
           f"needle breakpoint: {bp(prof['needle_breakpoint'])}",
           f"synthesis breakpoint: {bp(prof['synthesis_breakpoint'])}"]
    w = prof.get("usable_window_tokens")
    out.append(f"usable window: {w:,} tokens per call (80% of the synthesis breakpoint)" if w else
               "usable window: not set (synthesis never reached 90%); the default window stays")
    return out


def plot_profile(prof: dict, path: str | Path) -> Path:
    from rlm.plot import line_plot_png

    pts = {name: [(r["level"] * 100, r[name] * 100) for r in prof["curve"] if r[name] is not None]
           for name in ("needle", "synthesis")}
    return line_plot_png(Path(path), pts, title=f"accuracy vs fill: {prof['model']}"[:60],
                         xlabel="fill % of context", ylabel="accuracy %",
                         hline=THRESHOLD * 100)
