"""Finding and running the field's analyzers: a missing or failing tool is a status with its
reason, never a crash (the section then says so)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from rlm.codeview.shapes import ToolRun

TIMEOUT_S = 300.0  # one analyzer run; a bigger tree is cut in batches by the caller


def ruff_binary() -> str | None:
    """The ruff wheel's own binary (``ruff.find_ruff_bin``: it looks in this environment's
    scripts folders), else one on PATH."""
    try:
        from ruff.__main__ import find_ruff_bin

        return os.fsdecode(find_ruff_bin())
    except (ImportError, FileNotFoundError):
        return shutil.which("ruff")


@dataclass
class Proc:
    run: ToolRun
    stdout: str = ""


def run_tool(name: str, argv: list[str], cwd: Path, ok_codes: tuple[int, ...] = (0,),
             timeout: float = TIMEOUT_S) -> Proc:
    """Run one analyzer process; its status says what happened."""
    t0 = time.perf_counter()
    try:
        p = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                           stdin=subprocess.DEVNULL, check=False)
    except FileNotFoundError:
        return Proc(ToolRun(name=name, status="missing", detail=f"{argv[0]} not found"))
    except subprocess.TimeoutExpired:
        return Proc(ToolRun(name=name, status="failed", detail=f"timed out after {timeout:.0f}s",
                            wall_s=round(time.perf_counter() - t0, 3)))
    wall = round(time.perf_counter() - t0, 3)
    if p.returncode not in ok_codes:
        err = (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1][:300]
        return Proc(ToolRun(name=name, status="failed", detail=err, wall_s=wall), p.stdout)
    return Proc(ToolRun(name=name, wall_s=wall), p.stdout)


def version_of(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return ""
