"""`pip install .` (not editable) must ship every package: the list in pyproject.toml is
checked against the folders that hold an __init__.py, so a new package cannot be forgotten."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_package_is_listed_in_pyproject():
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(cfg["packages"])
    dirs = {"rlm": "rlm", **cfg.get("package-dir", {})}
    found = set()
    for pkg, folder in dirs.items():
        base = ROOT / folder
        for init in base.rglob("__init__.py"):
            rel = init.parent.relative_to(base).parts
            if "__pycache__" in rel or "template" in rel:
                continue
            found.add(".".join((pkg, *rel)))
    missing = sorted(found - listed)
    assert not missing, f"add to [tool.setuptools] packages in pyproject.toml: {missing}"
    assert not sorted(listed - found), "listed packages that do not exist"
