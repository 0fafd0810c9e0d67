"""Test -> definition links on real repositories: our ast resolver (rlm.repo.links) against jedi,
precision of a sample of verified links, and the code-only audit and mine against `ruff check`.

For each repository (an unpacked sdist with its tests: httpx, requests, click):

1. **ours**: parse every .py file and resolve every test's calls; seconds, and links by status.
2. **jedi** (`Script.goto(follow_imports=True)` at the called name, one `Project` per repo) on a
   sample of the same call sites: seconds per call and what it says, against ours.
3. **precision**: 30 sampled verified links, each checked by a script: by the runtime trace
   (evals/links_trace.py) when the repository's tests run here, else against jedi's answer;
   the links neither confirms are printed for a check by hand.
4. **timing**: `rlm audit` and `rlm mine` (canonical question) with no model, and `ruff check`
   alone, on the same tree in the same run: wall seconds and ratios.

    python -m evals.bench_links ROOT[:SRC] ... [--sample 30] [--jedi-calls 200] [--trace]

ROOT:SRC names the folder to put on the path (`click-8.5.1:src`). Figures, no pass/fail.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rlm.repo.files import is_test_file
from rlm.repo.links import Link, link_counts, resolve_test_links
from rlm.repo.facts import SKIP_DIRS

CANONICAL = "what already works and must not be touched?"
ENV_PYTHON = os.environ.get("RLM_BENCH_JEDI_PYTHON", "")  # a bare interpreter for jedi


def parse_repo(root: Path) -> dict[str, ast.Module]:
    trees = {}
    for p in sorted(root.rglob("*.py")):
        rel = p.relative_to(root).as_posix()
        if any(part in SKIP_DIRS or part.startswith(".") for part in rel.split("/")[:-1]):
            continue
        try:
            trees[rel] = ast.parse(p.read_text("utf-8", errors="replace"))
        except (SyntaxError, ValueError):
            continue
    return trees


def ours(root: Path) -> tuple[list[Link], float]:
    t = time.perf_counter()
    tests = resolve_test_links(parse_repo(root), is_test_file)
    return [x for t_ in tests for x in t_.links], time.perf_counter() - t


def jedi_answers(root: Path, src: str, links: list[Link]) -> tuple[dict[int, tuple], float]:
    """id(link) -> ("package", "path:line") | ("outside", name) | ("none", "")."""
    import jedi

    # an environment without the repository installed (the dev venv has click and requests:
    # jedi would follow those copies, not the tree under test)
    env = jedi.create_environment(ENV_PYTHON, safe=False) if ENV_PYTHON else None
    project = jedi.Project(root, added_sys_path=[str(root / src)] if src else [],
                           environment_path=ENV_PYTHON or None)
    scripts: dict[str, object] = {}
    out: dict[int, tuple] = {}
    t = time.perf_counter()
    for x in links:
        s = scripts.get(x.path) or scripts.setdefault(x.path, jedi.Script(
            path=str(root / x.path), project=project, environment=env))
        line, col = x.name_at
        try:
            got = s.goto(line, col, follow_imports=True)
        except Exception as e:  # jedi's own failures count as "none"
            out[id(x)] = ("none", type(e).__name__)
            continue
        d = got[0] if got else None
        if d is None or d.module_path is None:
            out[id(x)] = ("none", "")
            continue
        mp = Path(d.module_path)
        try:
            rel = mp.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            out[id(x)] = ("outside", d.full_name or d.name)
            continue
        out[id(x)] = ("package", f"{rel}:{d.line}") if not is_test_file(rel) else ("test", rel)
    return out, time.perf_counter() - t


def traced_check(root: Path, src: str, links: list[Link]) -> dict[int, str]:
    """id(link) -> confirmed | not observed | not run, from the tests' own run."""
    from evals.links_trace import run_traced

    ids = sorted({f"{x.path}::{x.test.replace('.', '::')}" for x in links})
    with tempfile.TemporaryDirectory() as tmp:  # only the sampled tests run, traced
        trace = run_traced(root, Path(tmp) / "trace.json", src, ids)
    out = {}
    for x in links:
        got = trace.get(f"{(root / x.path).resolve()}::{x.test}")
        if got is None:
            out[id(x)] = "not run"
            continue
        want = x.target.qualname
        path = str((root / x.target.path).resolve())
        hit = any(f == path and (q == want or (x.target.kind == "class" and q in (
            f"{want}.__init__", f"{want}.__new__", f"{want}.__post_init__"))) for f, q in got["calls"])
        out[id(x)] = "confirmed" if hit else "not observed"
    return out


def timing(root: Path) -> dict[str, float]:
    def wall(cmd: list[str]) -> float:
        t = time.perf_counter()
        subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
        return time.perf_counter() - t

    rlm = [sys.executable, "-m", "rlm.cli"]
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    got = {"ruff check": wall([ruff, "check", "--no-cache", "--exit-zero", str(root)]),
           "rlm audit --model none": wall([*rlm, "audit", str(root), "--model", "none", "--json"]),
           "rlm mine (canonical) --model none": wall([*rlm, "mine", str(root), CANONICAL,
                                                      "--model", "none", "--json"])}
    return got


def bench(spec: str, a) -> dict:
    root_s, _, src = spec.partition(":")
    root = Path(root_s).resolve()
    links, t_ours = ours(root)
    counts = link_counts([type("T", (), {"links": links})()])
    rng = random.Random(f"links-{root.name}")
    sample_calls = rng.sample(links, min(a.jedi_calls, len(links)))
    verified = [x for x in links if x.status == "verified"]
    sample_v = rng.sample(verified, min(a.sample, len(verified)))
    jedi, t_jedi = jedi_answers(root, src, sample_calls + sample_v)
    agree = {}
    for x in sample_calls:
        kind, where = jedi[id(x)]
        same = kind == "package" and x.target is not None and where == x.target.where
        key = f"ours {x.status} / jedi " + ("same" if same else kind)
        agree[key] = agree.get(key, 0) + 1
    trace = traced_check(root, src, sample_v) if root.name in a.trace else {}
    checked = []
    for x in sample_v:
        kind, where = jedi[id(x)]
        checked.append({"test": f"{x.path}::{x.test}", "call": x.call, "line": x.line,
                        "ours": x.target.where, "ours_name": x.target.qualname,
                        "jedi": f"{kind} {where}".strip(), "trace": trace.get(id(x), "")})
    return {"repo": root.name, "links": counts, "ours_s": round(t_ours, 2),
            "jedi_calls": len(sample_calls) + len(sample_v), "jedi_s": round(t_jedi, 2),
            "jedi_ms_per_call": round(1000 * t_jedi / max(1, len(sample_calls) + len(sample_v)), 1),
            "ours_ms_per_call": round(1000 * t_ours / max(1, len(links)), 3),
            "agreement": dict(sorted(agree.items())), "sample": checked,
            "timing": timing(root) if a.timing else {}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("repos", nargs="+")
    ap.add_argument("--sample", type=int, default=30)
    ap.add_argument("--jedi-calls", type=int, default=200)
    ap.add_argument("--trace", nargs="*", default=[],
                    help="repository folder names whose sampled tests run under the call tracer")
    ap.add_argument("--timing", action="store_true", help="time audit and mine against ruff")
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args()
    results = []
    for spec in a.repos:  # written after each repository: a long run keeps what it measured
        results.append(bench(spec, a))
        if a.out:
            a.out.write_text(json.dumps(results, indent=1))
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
