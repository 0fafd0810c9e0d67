"""Answers written by code, for the `none` model tier and whenever a model's wording fails.

- timeline: timestamps, components, grep hits as an ordered timeline, profile groups described
- rank: BM25 ranking of passages for questions that need reading (direct, fan-out)
- wording: what a model may add to code-found candidates, and what it may never change
"""
