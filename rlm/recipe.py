"""Recipes are data (recipes/*.toml): prompts per task, rendered into isolated messages."""

from __future__ import annotations

import tomllib
from functools import lru_cache
from importlib import resources

from rlm import schemas


@lru_cache(maxsize=None)
def load(name: str) -> dict:
    text = resources.files("rlm.recipes").joinpath(f"{name}.toml").read_text("utf-8")
    return tomllib.loads(text)


def task(recipe: str, name: str) -> dict:
    return load(recipe)[name]


def schema_model(recipe: str, name: str):
    return getattr(schemas, task(recipe, name)["schema"])


def messages(recipe: str, name: str, **fields: str) -> list[dict[str, str]]:
    """System (constant) first, then the user message: question, then material, last."""
    t = task(recipe, name)
    return [
        {"role": "system", "content": t["system"].format(**fields)},
        {"role": "user", "content": t["user"].format(**fields)},
    ]
