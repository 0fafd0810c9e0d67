"""ruff's findings: its JSON output (``ruff check --output-format json``: a list of
{code, message, filename, location{row, column}, end_location, fix, url, noqa_row, cell}), rated
by rlm.codeview.severity. ruff runs isolated (the repository's own config is not read, so every
repository is checked by the same rules) and writes no cache into the repository."""

from __future__ import annotations

import json
from pathlib import Path

from rlm.codeview import severity
from rlm.codeview.shapes import AnalyzerFinding, Analyzers, ToolRun
from rlm.codeview.tools import ruff_binary, run_tool

BATCH = 2000  # paths per ruff process (command-line length)


def ruff_argv(binary: str, paths: list[str]) -> list[str]:
    select, ignore = severity.selected()
    return [binary, "check", "--isolated", "--no-cache", "--no-fix", "--exit-zero",
            "--output-format", "json", "--select", ",".join(select), "--ignore",
            ",".join(ignore), "--", *paths]


def run_ruff(root: Path, py_files: list[str],
             is_test=lambda rel: False) -> tuple[Analyzers, ToolRun]:
    select, ignore = severity.selected()
    sec = Analyzers(selected=select, not_looked_at=[
        ("bandit's rules (S) in test files: fixture passwords, pickles and local servers are "
         "the tests' own (bandit users exclude tests the same way)"),
        f"rules outside {', '.join(select)} (style, naming, imports order)",
        f"ignored: {', '.join(ignore)} (assert use)",
        "the repository's own ruff configuration (ruff ran --isolated)",
        "files that are not Python"])
    binary = ruff_binary()
    if binary is None:
        sec.status, sec.note = "missing", "ruff is not installed: no analyzer findings"
        return sec, ToolRun(name="ruff", status="missing", detail="no ruff binary found")
    total = ToolRun(name="ruff", version=_version(binary, root))
    sec.produced_by = f"ruff {total.version}".strip()
    rows: list[dict] = []
    for i in range(0, len(py_files), BATCH):
        p = run_tool("ruff", ruff_argv(binary, py_files[i:i + BATCH]), root)
        total.wall_s += p.run.wall_s
        if p.run.status != "ran":
            sec.status, sec.note = "failed", f"ruff failed: {p.run.detail}"
            total.status, total.detail = p.run.status, p.run.detail
            return sec, total
        rows.extend(json.loads(p.stdout or "[]"))
    found = [f for r in rows if (f := _finding(root, r)) is not None]
    sec.findings = [f for f in found if not (f.kind == "security" and is_test(f.path))]
    sec.findings.sort(key=lambda f: (f.path, f.line, f.rule))
    for f in sec.findings:
        sec.by_rule[f.rule] = sec.by_rule.get(f.rule, 0) + 1
    total.wall_s = round(total.wall_s, 3)
    return sec, total


def _finding(root: Path, r: dict) -> AnalyzerFinding | None:
    try:
        rel = Path(r["filename"]).resolve().relative_to(root.resolve()).as_posix()
    except (KeyError, ValueError):
        return None
    code = r.get("code") or "E999"  # a syntax error has no code in ruff's JSON
    loc, end = r.get("location") or {}, r.get("end_location") or {}
    line = int(loc.get("row") or 1)
    sev, conf, basis, kind = severity.rate(code, r.get("message", ""))
    return AnalyzerFinding(tool="ruff", rule=code, message=r.get("message", "")[:300], path=rel,
                           line=line, end_line=max(line, int(end.get("row") or line)),
                           severity=sev, confidence=conf, basis=basis, kind=kind,
                           url=r.get("url") or "")


def _version(binary: str, root: Path) -> str:
    p = run_tool("ruff", [binary, "--version"], root, timeout=30)
    return p.stdout.strip().removeprefix("ruff ").strip() if p.run.status == "ran" else ""
