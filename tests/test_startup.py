"""`rlm --version` and `rlm --help` import only what they print: the version line loads no CLI
framework and no engine; the help loads the commands' signatures, not their work. (How long
they take is measured by evals/bench_startup.py, as a ratio to importing typer and pydantic.)"""

from __future__ import annotations

import subprocess
import sys

import pytest

_PROBE = """
import contextlib, io, sys
sys.argv = ["rlm"] + sys.argv[1:]
from rlm.cli import main
out = io.StringIO()
try:
    with contextlib.redirect_stdout(out):
        main()
except SystemExit:
    pass
print(out.getvalue().strip().splitlines()[0] if out.getvalue().strip() else "")
print(" ".join(sorted(sys.modules)))
"""


def _loaded(*args: str) -> tuple[str, set[str]]:
    r = subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True, text=True,
                       check=True)
    first, modules = r.stdout.rstrip("\n").rsplit("\n", 1)
    return first, set(modules.split())


def _tops(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in names or m.startswith(names))


def test_version_loads_no_cli_framework_and_no_engine():
    first, mods = _loaded("--version")
    assert first.startswith("rlm 0.1.0; model: ")
    assert _tops(mods, ("typer", "rich", "httpx", "pydantic", "anyio", "rlm.engine",
                        "rlm.api", "rlm.pipeline")) == []


@pytest.mark.parametrize("args", [("--help",), ("ask", "--help"), ("audit", "--help")])
def test_help_loads_no_engine(args):
    first, mods = _loaded(*args)
    assert "Usage" in first or first == ""  # rich may start with a blank line
    assert _tops(mods, ("httpx", "anyio", "rlm.engine", "rlm.api", "rlm.pipeline",
                        "rlm.repo", "rlm.models.openai_compat")) == []
