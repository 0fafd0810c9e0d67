"""The calibration prompts' material: filler lines and planted facts from material.toml."""

from __future__ import annotations

import random
import tomllib
from functools import lru_cache
from pathlib import Path

MATERIAL = Path(__file__).with_name("material.toml")


@lru_cache(maxsize=1)
def material() -> dict:
    return tomllib.loads(MATERIAL.read_text("utf-8"))


def filler_line(rng: random.Random) -> str:
    """One line of routine chat: a speaker and a short remark or a subject with a predicate."""
    m = material()
    who = rng.choice(m["speakers"])
    if rng.random() < 0.25:
        return f"{who}: {rng.choice(m['short'])}"
    return f"{who}: {rng.choice(m['subjects'])} {rng.choice(m['predicates'])}."


def facts(task: str, rng: random.Random) -> tuple[str, list[str], list[str]]:
    """(question, planted lines, expected answer strings) for ``needle`` or ``synthesis``."""
    m = material()
    spec = m[task]
    if task == "needle":
        values = {"color": rng.choice(spec["colors"]), "code": str(rng.randrange(1000, 10000))}
        expected = [values["code"]]
    else:
        values = {"project": rng.choice(spec["projects"]), "city": rng.choice(spec["cities"]),
                  "rooms": str(rng.randrange(12, 90))}
        values["date"] = f"{rng.choice(spec['months'])} {rng.randrange(2, 28)}"
        expected = [values["city"], values["rooms"], values["date"]]
    lines = [f.format(who=rng.choice(m["speakers"]), **values) for f in spec["facts"]]
    return spec["question"].format(**values), lines, expected
