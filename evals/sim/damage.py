"""The noisy reader's damage to what comes after the map step: merged claims (reduce) and
answers (synthesis, direct and grep reads). Every damage is logged with the token it put in, so
scoring can tell whether rlm refused the merge or flagged the answer."""

from __future__ import annotations

import random
import re
from typing import Callable

_NUMID = re.compile(r"[A-Za-z0-9_.:/-]*\d[A-Za-z0-9_.:/-]*")  # rlm.engine.reducer's tokens


def alter(tok: str, rng: random.Random) -> str:
    """The token with one digit changed."""
    idx = [i for i, ch in enumerate(tok) if ch.isdigit()]
    i = rng.choice(idx)
    return tok[:i] + str((int(tok[i]) + rng.randint(1, 9)) % 10) + tok[i + 1:]


def invented_id(rng: random.Random) -> str:
    return f"INC-{rng.randrange(10**5, 10**6)}"


def merge(g: dict, rng: random.Random, rate: float, note: Callable) -> dict:
    """A merged claim that drops, alters or adds a number or identifier (rlm must refuse it)."""
    if rng.random() >= rate:
        return g
    claim = g["claim"]
    toks = [m for m in _NUMID.finditer(claim) if m.group(0).strip(".:,")]
    how = rng.choice(["drop", "alter", "invent"]) if toks else "invent"
    if how == "invent":
        new = invented_id(rng)
        claim = f"{claim} (see {new})"
    else:
        m = rng.choice(toks)
        new = "" if how == "drop" else alter(m.group(0).strip(".:,"), rng)
        claim = claim[:m.start()] + new + claim[m.end():]
    note("merge_damage", how=how, token=new, claim=claim[:240])
    return {**g, "claim": claim[:240]}


def answer(out: dict, rng: random.Random, rate: float, note: Callable) -> dict:
    """An answer with one number altered, or an identifier no line holds (rlm must flag it)."""
    if rng.random() >= rate:
        return out
    ans = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", out["answer"])  # "275,000" is one number
    toks = list(_NUMID.finditer(ans))
    if toks and rng.random() < 0.5:
        m = rng.choice(toks)
        new = alter(m.group(0), rng)
        ans = ans[:m.start()] + new + ans[m.end():]
        note("answer_damage", how="alter", token=new.strip(".:,"), was=m.group(0).strip(".:,"))
    else:
        new = invented_id(rng)
        ans = f"Logged as {new}. {ans}"  # first: the answer's 800-character cut keeps it
        note("answer_damage", how="invent", token=new)
    return {**out, "answer": ans[:800]}


def record_value(r: dict, line_text: str, rng: random.Random, note: Callable) -> dict:
    """A record whose value is another number of its line (the wrong field), or a number its
    line does not show."""
    others = [float(x) for x in re.findall(r"(?<![\w-])\d+(?:\.\d+)?", line_text)
              if float(x) != r["value"]]
    if others and rng.random() < 0.5:
        new, how = rng.choice(others), "wrong_field"
    else:
        new, how = r["value"] + rng.randint(1, 9) * 1000, "invented"
    note("badvalue", line=r["line"], item=r["item"], how=how, value=new, was=r["value"])
    return {**r, "value": new}
