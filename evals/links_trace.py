"""The ground truth of test -> definition links, by running the tests: a pytest plugin that
records, for each test function, every Python function called by the test's own code: its frame
or a function written inside it (a nested command), seen through frames outside the repository
(contextlib's and functools' wrappers) — sys.setprofile "call" events.

A link stated by code (rlm.repo.links) is *confirmed* when the traced test's code called that
definition; *not observed* when the test ran and its code never called it (a false link, or a
call on a line or branch that did not run: check those by hand); tests that did not run say
nothing. Classes count as called when their ``__init__`` or ``__new__`` ran (a generated
``__init__`` of a dataclass or attrs class has no file: such class links stay unobserved).

    python -m evals.links_trace ROOT [--pythonpath src] [--out trace.json] [-- pytest args]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

_RESULTS: dict[str, dict] = {}


def _nested(code) -> set:
    """The test's code object and every function code object written inside it."""
    out, todo = set(), [code]
    while todo:
        c = todo.pop()
        out.add(c)
        todo.extend(k for k in c.co_consts if hasattr(k, "co_code"))
    return out


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    fn = getattr(item, "obj", None)
    code = getattr(getattr(fn, "__func__", fn), "__code__", None)
    if code is None:
        yield
        return
    mine = _nested(code)
    root = os.environ.get("RLM_LINKS_TRACE_ROOT", "")
    calls: set = set()

    def profile(frame, event, arg):
        if event != "call":
            return
        caller, hops = frame.f_back, 0
        # through frames outside the repository (contextlib's helper, functools.wraps): a
        # decorated function is still called by the test that wrote the call
        while caller is not None and hops < 4 and not caller.f_code.co_filename.startswith(root):
            caller, hops = caller.f_back, hops + 1
        if caller is not None and caller.f_code in mine:
            c = frame.f_code
            calls.add((c.co_filename, c.co_qualname))

    sys.setprofile(profile)
    try:
        yield
    finally:
        sys.setprofile(None)
        key = f"{Path(str(item.fspath)).resolve()}::{fn.__qualname__}"
        _RESULTS.setdefault(key, {"lines": set(), "calls": set()})["calls"].update(calls)


def pytest_sessionfinish(session):
    out = os.environ.get("RLM_LINKS_TRACE_OUT")
    if out:
        Path(out).write_text(json.dumps({k: {"lines": sorted(v["lines"]),
                                             "calls": sorted(v["calls"])}
                                         for k, v in _RESULTS.items()}))


def run_traced(root: Path, out: Path, pythonpath: str = "", extra: list[str] | None = None,
               timeout: int = 900) -> dict:
    """Run the repository's tests under the plugin; returns {abs_path::qualname: calls}."""
    env = dict(os.environ, RLM_LINKS_TRACE_OUT=str(out), RLM_LINKS_TRACE_ROOT=str(root))
    paths = [str(root / pythonpath) if pythonpath else str(root), str(Path(__file__).parents[1])]
    env["PYTHONPATH"] = os.pathsep.join(paths + [env.get("PYTHONPATH", "")])
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                    "-p", "evals.links_trace", *(extra or [])], cwd=root, env=env,
                   capture_output=True, text=True, timeout=timeout)
    return json.loads(out.read_text()) if out.is_file() else {}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", type=Path)
    ap.add_argument("--pythonpath", default="")
    ap.add_argument("--out", type=Path, default=Path("links-trace.json"))
    ap.add_argument("pytest_args", nargs="*")
    a = ap.parse_args()
    got = run_traced(a.root.resolve(), a.out.resolve(), a.pythonpath, a.pytest_args)
    print(f"{len(got)} test(s) traced -> {a.out}")


if __name__ == "__main__":
    main()
