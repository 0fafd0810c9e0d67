"""The test map: which test files reach which modules of the repository through imports (the
test imports it, or imports something that imports it). Reaching is not running: a module a
test imports is not thereby exercised."""

from __future__ import annotations

from rlm.codeview.graph import RUNTIME
from rlm.codeview.shapes import ModuleGraph, TestMap, TestReach

MAX_DIRECT = 20  # test files listed per module; the count is whole


def build_test_map(graph: ModuleGraph) -> TestMap:
    tm = TestMap(produced_by="rlm (the module graph)", not_looked_at=[
        "what a test executes (imports only: no coverage run)",
        "tests that load code by path or through a plugin"])
    nodes = {n.id: n for n in graph.nodes}
    tests = sorted(n.id for n in graph.nodes if n.is_test)
    tm.tests = len(tests)
    adj: dict[str, list[str]] = {}
    for e in graph.edges:
        if e.kind in RUNTIME:
            adj.setdefault(e.source, []).append(e.target)
    direct: dict[str, list[str]] = {}
    reach: dict[str, int] = {}
    for t in tests:
        for m in adj.get(t, ()):
            if not nodes[m].is_test:
                direct.setdefault(m, []).append(nodes[t].path)
        seen, todo = set(), [m for m in adj.get(t, ()) if not nodes[m].is_test]
        while todo:
            m = todo.pop()
            if m in seen:
                continue
            seen.add(m)
            todo.extend(x for x in adj.get(m, ()) if not nodes[x].is_test)
        for m in seen:
            reach[m] = reach.get(m, 0) + 1
    code = [n for n in graph.nodes if not n.is_test]
    tm.modules = [TestReach(module=n.id, path=n.path, direct=sorted(direct.get(n.id, []))[:MAX_DIRECT],
                            reached_by=reach.get(n.id, 0)) for n in code]
    tm.unreached = [n.id for n in code if not reach.get(n.id)]
    if not tests:
        tm.status, tm.note = "not_applicable", "no test files (test_*.py, *_test.py, tests/)"
    return tm
