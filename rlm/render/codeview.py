"""The whole-repository views of an audit as Markdown (rlm.codeview.shapes): each section says
which tool produced it and what it did not look at."""

from __future__ import annotations

from rlm.render.safetext import code
from rlm.codeview.shapes import Analyzers, CodeViews, Section

SEVERITIES = ("high", "medium", "low")
ROWS = 15  # rows per table; the JSON report has them all


def _md(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _about(sec: Section) -> str:
    parts = [f"Produced by {sec.produced_by or '-'}."]
    if sec.status != "ok":
        parts.append(f"**{sec.status.replace('_', ' ')}**: {sec.note}.")
    if sec.not_looked_at:
        parts.append("Not looked at: " + "; ".join(sec.not_looked_at) + ".")
    return "_" + " ".join(parts) + "_"


def _more(total: int) -> str:
    return f"\n\n… {total - ROWS} more in the JSON report (`views`)." if total > ROWS else ""


def _analyzers(a: Analyzers) -> list[str]:
    out = ["### What the analyzers found", _about(a)]
    if a.status != "ok":
        return out
    count = {s: sum(f.severity == s for f in a.findings) for s in SEVERITIES}
    out.append(f"{len(a.findings)} finding(s) for rules {', '.join(a.selected)}: "
               + ", ".join(f"{n} {s}" for s, n in count.items())
               + ". Medium and high ones outside tests are in **Risks, ranked**, checked at "
                 "their lines. Severity is the origin's (bandit's for S rules; rlm's rating per "
                 "rule family for the others), one level lower when its confidence is low.")
    rules: dict[str, tuple[int, str, str]] = {}
    for f in a.findings:
        n, _, _ = rules.get(f.rule, (0, "", ""))
        rules[f.rule] = (n + 1, f.severity, f.basis)
    rows = sorted(rules.items(), key=lambda kv: (SEVERITIES.index(kv[1][1]), -kv[1][0], kv[0]))
    table = ["| Rule | Findings | Severity | Why this severity |", "|---|---:|---|---|"]
    table += [f"| `{r}` | {n} | {s} | {_md(b)} |" for r, (n, s, b) in rows[:ROWS]]
    out.append("\n".join(table) + _more(len(rows)))
    return out


def _complexity(v: CodeViews) -> list[str]:
    c = v.complexity
    out = ["### Complexity", _about(c)]
    if c.status != "ok":
        return out
    ranks = ", ".join(f"{k}: {c.by_rank[k]}" for k in sorted(c.by_rank))
    out.append(f"{c.functions} function(s), mean cyclomatic complexity {c.mean} (ranks {ranks}).")
    table = ["| Function | Complexity | Rank | Where |", "|---|---:|---|---|"]
    table += [f"| `{f.name}` | {f.complexity} | {f.rank} | {code(f'{f.path}:{f.line}-{f.end_line}')} |"
              for f in c.top[:ROWS]]
    out.append("\n".join(table))
    return out


def _dead_code(v: CodeViews) -> list[str]:
    d = v.dead_code
    out = ["### Dead code", _about(d)]
    if d.status != "ok":
        return out
    by = ", ".join(f"{k}: {n}" for k, n in sorted(d.by_rule.items()))
    out.append(f"{len(d.findings)} candidate(s) ({by or 'none'}). Confidence is vulture's.")
    sure = sorted(d.findings, key=lambda f: (SEVERITIES.index(f.confidence), f.path, f.line))
    out.append("\n".join(f"- {_md(f.message)} — {code(f'{f.path}:{f.line}')} ({f.confidence} confidence)"
                         for f in sure[:ROWS]) + _more(len(sure)))
    return out


def _graph(v: CodeViews) -> list[str]:
    g = v.graph
    out = ["### Module graph", _about(g)]
    code = [n for n in g.nodes if not n.is_test]
    out.append(f"{len(g.nodes)} module(s) ({len(code)} outside tests), {len(g.edges)} import "
               f"edge(s), {len(g.layers)} layer(s) (layer 0 imports no other module of the "
               f"repository).")
    if g.cycles:
        out.append(f"**{len(g.cycles)} import cycle(s)** (imports that run: module level and "
                   "inside functions):\n" + "\n".join(
                       f"- {' ↔ '.join(f'`{m}`' for m in c[:8])}" + (" …" if len(c) > 8 else "")
                       for c in g.cycles[:ROWS]))
    else:
        out.append("No import cycle.")
    by_id = {n.id: n for n in g.nodes}
    table = ["| Most imported | Imported by (modules outside tests) | Layer |", "|---|---:|---:|"]
    table += [f"| `{m}` | {by_id[m].imported_by} | {by_id[m].layer} |" for m in g.most_imported]
    if g.most_imported:
        out.append("\n".join(table))
    return out


def _entry_points(v: CodeViews) -> list[str]:
    e = v.entry_points
    out = ["### Entry points", _about(e)]
    if e.items:
        table = ["| Kind | Name | Runs | Where |", "|---|---|---|---|"]
        table += [f"| {i.kind.replace('_', ' ')} | `{_md(i.name)}` | {_md(i.target) or '—'} | "
                  f"{code(f'{i.path}:{i.line}')} |" for i in e.items[:ROWS]]
        out.append("\n".join(table) + _more(len(e.items)))
    return out


def _public_api(v: CodeViews) -> list[str]:
    p = v.public_api
    out = ["### Public API", _about(p)]
    for pkg in p.packages:
        names = ", ".join(f"`{n.name}`" for n in pkg.names[:40])
        extra = f" and {len(pkg.names) - 40} more" if len(pkg.names) > 40 else ""
        out.append(f"**`{pkg.package}`** ({pkg.source} in {code(pkg.path)}, {len(pkg.names)} "
                   f"name(s)): {names or '—'}{extra}")
    return out


def _dependencies(v: CodeViews) -> list[str]:
    d = v.dependencies
    out = ["### Dependencies", _about(d)]
    if d.declared:
        table = ["| Dependency | Group | Imported as | Files importing it (tests) | Declared at |",
                 "|---|---|---|---:|---|"]
        table += [f"| `{_md(x.spec)}` | {x.group or 'default'} | "
                  f"{', '.join(x.import_names)} ({x.import_basis}) | {len(x.used_in)} "
                  f"({len(x.used_in_tests)}) | {code(f'{x.path}:{x.line}')} |" for x in d.declared[:30]]
        out.append("\n".join(table) + ("" if len(d.declared) <= 30 else
                                       f"\n\n… {len(d.declared) - 30} more in the JSON report."))
    if d.unused:
        out.append("Declared, no import found: " + ", ".join(f"`{u}`" for u in d.unused) + ".")
    if d.undeclared:
        out.append("Imported, not declared: " + ", ".join(
            f"`{u.name}`" + (" (optional)" if u.optional else "")
            + (" (tests only)" if u.in_tests_only else "") for u in d.undeclared[:40]) + ".")
    return out


def _test_map(v: CodeViews) -> list[str]:
    t = v.test_map
    out = ["### Test map", _about(t)]
    if t.status != "ok":
        return out
    reached = sum(1 for m in t.modules if m.reached_by)
    out.append(f"{t.tests} test file(s) reach {reached} of {len(t.modules)} module(s) through "
               "imports.")
    if t.unreached:
        out.append("Reached by no test: " + ", ".join(f"`{m}`" for m in t.unreached[:40])
                   + (f" and {len(t.unreached) - 40} more" if len(t.unreached) > 40 else "") + ".")
    return out


def _hotspots(v: CodeViews) -> list[str]:
    h = v.hotspots
    out = ["### Hotspots", _about(h)]
    if h.status == "ok":
        out.append(f"{h.commits} commit(s) read; files ranked by commits × complexity.")
        table = ["| File | Commits | Lines changed | Complexity | Score |", "|---|---:|---:|---:|---:|"]
        table += [f"| `{f.path}` | {f.commits} | {f.churn} | {f.complexity} | {f.score} |"
                  for f in h.files]
        out.append("\n".join(table))
    return out


def views_markdown(v: CodeViews | None) -> list[str]:
    if v is None:
        return []
    tools = ", ".join(f"{t.name} {t.version}".strip() + ("" if t.status == "ran" else f" ({t.status})")
                      for t in v.tools)
    return ([f"## Whole-repository views\n\nBy code, no model: {tools}; {v.wall_s:.1f}s."]
            + _analyzers(v.analyzers) + _complexity(v) + _dead_code(v) + _graph(v)
            + _entry_points(v) + _public_api(v) + _dependencies(v) + _test_map(v) + _hotspots(v))
