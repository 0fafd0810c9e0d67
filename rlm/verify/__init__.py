"""Checks of what a model claimed, by code: evidence (a quote at the cited lines), support (a
cited line carries the answer), the answer check, claim support (repository facts) and echoes
(a model that repeats its prompt)."""
