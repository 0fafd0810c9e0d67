"""Prompt parts: recipes (prompts, schemas and rules as data, read from rlm.recipes) and the
fence that marks corpus text as data."""
