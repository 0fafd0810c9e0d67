"""Pydantic shapes, split by trust: `calls` (what a model returns: untrusted, bounded,
validated), `report` (the public report contract) and `repo_report` (what audit and mine add)."""
