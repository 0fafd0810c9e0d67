"""Prompts as data: one TOML file per recipe (loaded by rlm.prompts.recipe)."""
