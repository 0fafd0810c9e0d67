"""All the views of one repository, in one pass over its parsed files."""

from __future__ import annotations

import time
from pathlib import Path

from rlm.codeview.api import build_public_api
from rlm.codeview.complexity import build_complexity
from rlm.codeview.deadcode import build_dead_code
from rlm.codeview.deps import build_dependencies
from rlm.codeview.entrypoints import build_entry_points
from rlm.codeview.graph import build_graph
from rlm.codeview.hotspots import build_hotspots
from rlm.codeview.imports import all_imports
from rlm.codeview.packaging import read_metadata
from rlm.codeview.ruff import run_ruff
from rlm.codeview.shapes import CodeViews
from rlm.codeview.sources import Sources
from rlm.codeview.testmap import build_test_map
from rlm.repo.facts import RepoFacts, repo_facts


def sources_of(root: str | Path, files: list[str]) -> Sources:
    """The Python files among ``files`` (paths relative to ``root``, as the walker kept them),
    each read and parsed once for every view (and for the caller's own use of the trees)."""
    return Sources(Path(root).resolve(), sorted(f for f in files if f.endswith(".py")))


def build_views(root: str | Path, files: list[str], facts: RepoFacts | None = None,
                src: Sources | None = None) -> CodeViews:
    """Every view over the Python files among ``files``; ``src``: their Sources when the
    caller has them already."""
    t0 = time.perf_counter()
    root = Path(root).resolve()
    src = src or sources_of(root, files)
    v = CodeViews()
    v.analyzers, r = run_ruff(root, src.files, src.is_test)
    v.tools.append(r)
    v.complexity, r = build_complexity(src)
    v.tools.append(r)
    v.public_api = build_public_api(src)
    v.dead_code, r = build_dead_code(src, {n.name for p in v.public_api.packages
                                           for n in p.names})
    v.tools.append(r)
    imports = all_imports(src)
    v.graph = build_graph(src, imports)
    v.test_map = build_test_map(v.graph)
    md = read_metadata(root)
    v.entry_points = build_entry_points(md, facts or repo_facts(root))
    v.dependencies = build_dependencies(src, md, imports)
    v.hotspots, r = build_hotspots(src, v.complexity)
    v.tools.append(r)
    if src.unparsed:
        v.graph.not_looked_at.append(f"{len(src.unparsed)} file(s) that do not parse: "
                                     + ", ".join(sorted(src.unparsed)[:10]))
    v.wall_s = round(time.perf_counter() - t0, 3)
    return v
