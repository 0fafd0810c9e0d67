"""Whole-repository views by code, for `rlm audit` (no model reads anything here).

The field's analyzers where they are installed (ruff: correctness and bandit's security rules,
rlm.codeview.ruff; radon: complexity; vulture: dead code), and what only a view of the whole
repository gives: the module graph with its layers and cycles (graph), entry points, the public
API, declared dependencies and where each is used (deps), the test map, and hotspots from git
history. Each section says which tool produced it and what it did not look at; a missing tool is
a section status, never a crash. Entry: rlm.codeview.build.build_views; shapes:
rlm.codeview.shapes (the report's ``views``).
"""
