"""Cyclomatic complexity per function, by radon (``radon.complexity.cc_visit``; ranks A-F as
radon gives them: A 1-5, B 6-10, C 11-20, D 21-30, E 31-40, F 41+)."""

from __future__ import annotations

from rlm.codeview.shapes import Complexity, FunctionComplexity, ToolRun
from rlm.codeview.sources import Sources
from rlm.codeview.tools import version_of

TOP = 15


def build_complexity(src: Sources) -> tuple[Complexity, ToolRun]:
    import time

    sec = Complexity(not_looked_at=["test files", "files that do not parse",
                                    "module-level code outside functions"])
    try:
        from radon.complexity import cc_rank, cc_visit_ast
    except ImportError:
        sec.status, sec.note = "missing", "radon is not installed: no complexity figures"
        return sec, ToolRun(name="radon", status="missing", detail="import radon failed")
    run = ToolRun(name="radon", version=version_of("radon"))
    sec.produced_by = f"radon {run.version}".strip()
    t0 = time.perf_counter()
    rows: list[FunctionComplexity] = []
    for rel in src.files:
        tree = None if src.is_test(rel) else src.tree(rel)
        if tree is None:
            continue
        try:
            blocks = cc_visit_ast(tree)  # the tree every view shares: parsed once
        except (SyntaxError, ValueError) as e:
            src.unparsed.setdefault(rel, f"radon: {e}"[:200])
            continue
        total = 0
        for b in blocks:
            if not hasattr(b, "is_method"):
                continue  # a class: its methods are listed on their own
            name = f"{b.classname}.{b.name}" if b.classname else b.name
            rows.append(FunctionComplexity(name=name, path=rel, line=b.lineno,
                                           end_line=b.endline or b.lineno,
                                           complexity=b.complexity, rank=cc_rank(b.complexity)))
            total += b.complexity
        sec.per_file[rel] = total
    run.wall_s = round(time.perf_counter() - t0, 3)
    sec.functions = len(rows)
    sec.mean = round(sum(r.complexity for r in rows) / len(rows), 2) if rows else 0.0
    for r in rows:
        sec.by_rank[r.rank] = sec.by_rank.get(r.rank, 0) + 1
    sec.top = sorted(rows, key=lambda r: (-r.complexity, r.path, r.line))[:TOP]
    return sec, run
