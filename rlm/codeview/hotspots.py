"""Hotspots: files ranked by change frequency × complexity, from ``git log --numstat`` (the way
CodeScene-style tools find where the risk lives: complex code that keeps changing)."""

from __future__ import annotations

from rlm.codeview.shapes import Complexity, Hotspot, Hotspots, ToolRun
from rlm.codeview.sources import Sources
from rlm.codeview.tools import run_tool

MAX_COMMITS = 2000  # the newest commits read; the section says when it stopped there
TOP = 15


def build_hotspots(src: Sources, cx: Complexity) -> tuple[Hotspots, ToolRun]:
    sec = Hotspots(produced_by="git log --numstat", not_looked_at=[
        "renames (a renamed file starts its history again)", "test files",
        f"commits older than the newest {MAX_COMMITS}"])
    probe = run_tool("git", ["git", "rev-parse", "--is-inside-work-tree"], src.root, timeout=30)
    if probe.run.status == "missing":
        sec.status, sec.note = "missing", "git is not installed: no history to rank by"
        return sec, probe.run
    if probe.stdout.strip() != "true":
        sec.status, sec.note = "not_applicable", "not a git work tree: no history to rank by"
        return sec, ToolRun(name="git", detail="not a git work tree (no hotspots)")
    p = run_tool("git", ["git", "log", "--numstat", "--no-renames", "--format=%x00%H",
                         f"-n{MAX_COMMITS}", "--relative", "--", "."], src.root, timeout=120)
    if p.run.status != "ran":
        sec.status, sec.note = p.run.status, f"git log: {p.run.detail}"
        return sec, p.run
    commits: dict[str, int] = {}
    churn: dict[str, int] = {}
    for block in p.stdout.split("\x00")[1:]:
        sec.commits += 1
        for row in block.splitlines()[1:]:
            parts = row.split("\t")
            if len(parts) != 3:
                continue
            add, dele, path = parts
            commits[path] = commits.get(path, 0) + 1
            churn[path] = churn.get(path, 0) + (int(add) if add.isdigit() else 0) + (
                int(dele) if dele.isdigit() else 0)
    if not commits:
        sec.status, sec.note = "not_applicable", "no commit touches these files"
        return sec, p.run
    if cx.status != "ok":
        sec.not_looked_at.append("complexity (radon missing): line counts stand in for it")
    rows = []
    for rel in src.files:
        if rel not in commits or src.is_test(rel):
            continue
        c = cx.per_file.get(rel, 0) if cx.status == "ok" else src.lines(rel)
        rows.append(Hotspot(path=rel, commits=commits[rel], churn=churn[rel], complexity=c,
                            score=commits[rel] * c))
    sec.files = sorted(rows, key=lambda h: (-h.score, h.path))[:TOP]
    return sec, p.run

