"""The --suite branch of `python -m evals.run` (kept apart: run.py holds the cases)."""

from __future__ import annotations

import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

import anyio

from evals.suites_report import SUITES, embedded_model, md_table, run_suites, write_sections

NO_MODEL_NOTE = ("the embedded model's rows are in the section after this one, written by "
                 "`python -m evals.run --suite NAME --model local` (needs the local extra); a "
                 "served model's by `--model NAME --base-url URL`")


def _loadavg() -> str:
    try:
        return "/".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "?"


def main_suites(args) -> int:
    names = [s.strip() for s in args.suite.split(",") if s.strip()]
    bad = [s for s in names if s not in SUITES]
    if bad:
        print(f"unknown suite(s): {', '.join(bad)}; known: {', '.join(SUITES)}", file=sys.stderr)
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="rlm-suite-"))
    for env, sub in (("RLM_CACHE_DIR", "cache"), ("RLM_DATA_DIR", "data"),
                     ("RLM_CONFIG_DIR", "config")):
        os.environ[env] = str(tmp / sub)
    workdir = Path(args.workdir) if args.workdir else tmp / "fixtures"
    workdir.mkdir(parents=True, exist_ok=True)
    models, notes = [], []
    from rlm.errors import RlmError

    try:
        if args.model == "local":
            emb, why = embedded_model(args.timeout)
            if emb is None:
                print(f"evals: {why}", file=sys.stderr)
                return 2
            models.append(emb)
        elif args.model and not args.model.startswith("sim:"):
            from rlm.models.registry import resolve_model

            models.append(resolve_model(args.model, args.base_url, timeout=args.timeout))
        if not models:
            notes.append(NO_MODEL_NOTE)
    except RlmError as e:
        print(f"evals: {e}", file=sys.stderr)
        return 2
    load0, t0 = _loadavg(), time.monotonic()

    async def go():
        try:
            return await run_suites(names, workdir, args.quick, models,
                                    max(args.concurrency, 4), args.timeout,
                                    embedded_all=getattr(args, "embedded_all", False))
        finally:
            for m in models:
                await m.aclose()

    try:
        by_suite = anyio.run(go)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    wall = time.monotonic() - t0
    cmd = "python -m evals.run --suite " + ",".join(names) + (" --quick" if args.quick else "")
    if args.model:
        cmd += f" --model {args.model}" + (" --base-url URL" if args.base_url else "")
    meta = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "command": cmd,
            "machine": f"{os.cpu_count()} CPU core(s), {platform.platform(terse=True)}, Python "
                       f"{platform.python_version()}; load average {load0} before, {_loadavg()} "
                       "after (shared machine: wall times are inflated when above the core count)",
            "wall_s": wall, "extra": {s: [""] + [f"Note: {n}." for n in notes] for s in names}}
    for s, rows in by_suite.items():
        print(f"\n== suite {s}\n" + md_table(rows))
    for n in notes:
        print(f"note: {n}")
    if not args.no_write:
        print(f"wrote {write_sections(Path(args.out_dir), by_suite, meta)}")
    return 0
