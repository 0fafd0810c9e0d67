"""Recipes are data (recipes/*.toml): prompts per task, rendered into isolated messages."""

from __future__ import annotations

import tomllib
from functools import lru_cache
from importlib import resources

from rlm.corpus.instructions import withhold_text
from rlm.prompts import fence
from rlm.schemas import calls


@lru_cache(maxsize=None)
def load(name: str) -> dict:
    text = resources.files("rlm.recipes").joinpath(f"{name}.toml").read_text("utf-8")
    return tomllib.loads(text)


def task(recipe: str, name: str) -> dict:
    return load(recipe)[name]


def schema_model(recipe: str, name: str):
    return getattr(calls, task(recipe, name)["schema"])


# fields written by the user or by code, never taken from the corpus
TRUSTED_FIELDS = frozenset({"question", "note"})


def messages(recipe: str, name: str, **fields: str) -> list[dict[str, str]]:
    """System (constant) first, then the user message: question, then material, last.
    The material (corpus text) is fenced as data and the system message says so (rlm.prompts.fence).
    In every field made from the corpus, a line that reads like an instruction to a model is
    withheld (rlm.corpus.instructions.withhold_text), whatever path built it."""
    fields = {k: v if k in TRUSTED_FIELDS or not isinstance(v, str) else withhold_text(v)[0]
              for k, v in fields.items()}
    t = task(recipe, name)
    system = t["system"].format(**fields)
    if "material" in fields and "{material}" in t["user"]:
        fields = {**fields, "material": fence.wrap(fields["material"])}
        system = f"{system}\n{fence.NOTICE}"
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": t["user"].format(**fields)},
    ]
