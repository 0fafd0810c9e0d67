"""Start-up time of the CLI, as ratios to importing typer and pydantic in the same run.

    python -m evals.bench_startup [--rounds 7]

Each round runs, one after the other, `python -c "import typer, pydantic"` (the reference: what
any typer + pydantic CLI pays), `rlm --version` and `rlm --help` (through `python -m rlm.cli`,
the same code as the installed entry point); the medians and their ratios are printed. Issue 18's
target: `rlm --version` at most 2x the reference. The machine may be loaded: read the ratios.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

COMMANDS = {
    "import typer, pydantic": [sys.executable, "-c", "import typer, pydantic"],
    "rlm --version": [sys.executable, "-m", "rlm.cli", "--version"],
    "rlm --help": [sys.executable, "-m", "rlm.cli", "--help"],
}


def measure(rounds: int) -> dict[str, float]:
    times: dict[str, list[float]] = {k: [] for k in COMMANDS}
    for _ in range(rounds):
        for name, cmd in COMMANDS.items():
            t = time.perf_counter()
            subprocess.run(cmd, capture_output=True, check=True)
            times[name].append(time.perf_counter() - t)
    return {k: statistics.median(v) for k, v in times.items()}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args(argv)
    med = measure(args.rounds)
    ref = med["import typer, pydantic"]
    print(f"{'command':<24} {'median s':>9} {'x reference':>12}")
    for name, s in med.items():
        print(f"{name:<24} {s:>9.3f} {s / ref:>12.2f}")


if __name__ == "__main__":
    main()
