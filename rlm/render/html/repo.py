"""The sections of an audit (module map with its dependency graph, the risks table) and of a
mine (the facts table per question, with verified, inferred and placeholder states)."""

from __future__ import annotations

from rlm.render.html.graph import graph_svg
from rlm.render.html.page import esc, ref, section, table

SEVERITY_RANK = {"high": 0, "medium": 1, "low": 2}


def _evidence_ref(ep: str) -> str:
    """``path:12-14`` as a copyable ref (the text as given when it is not of that form)."""
    path, _, rng = (ep or "").rpartition(":")
    a, _, b = rng.partition("-")
    if path and a.isdigit():
        return ref(path, int(a), int(b) if b.isdigit() else None)
    return esc(ep)


def _cell(text, width: int = 200) -> str:
    t = " ".join(str(text or "").split())
    return esc(t if len(t) <= width else t[:width] + "…")


def audit_sections(rep: dict) -> str:
    a = rep.get("audit") or {}
    out = []
    modules = [m for m in a.get("modules") or [] if isinstance(m, dict)]
    if modules:
        rows = [[f"<code>{esc(m.get('name'))}</code>", f"{int(m.get('files') or 0):,}",
                 f"{int(m.get('lines') or 0):,}", _cell(m.get("purpose")) or "—",
                 ", ".join(f"<code>{esc(x)}</code>" for x in m.get("key_apis") or []) or "—",
                 ", ".join(f"<code>{esc(t)}</code>" for t in (m.get("tested_by") or [])[:3])
                 + (f" +{len(m['tested_by']) - 3}" if len(m.get("tested_by") or []) > 3 else ""),
                 str(m.get("findings") or 0)] for m in modules]
        body = table(["Module", "Files", "Lines", "Purpose (model)", "Key APIs (found in code)",
                      "Tests importing it", "Findings"], rows, num={1, 2, 6})
        body += graph_svg(a, ((rep.get("views") or {}).get("graph")))
        out.append(section("Module map", body, "modules"))
    risks = sorted((f for f in rep.get("findings") or [] if isinstance(f, dict)
                    and f.get("kind") == "risk" and f.get("status") != "rejected"),
                   key=lambda f: (SEVERITY_RANK.get(f.get("severity") or "medium", 3),
                                  (f.get("source") or {}).get("path", "")))
    if risks or modules:
        rows = []
        for i, f in enumerate(risks, 1):
            s = f.get("source") or {}
            rows.append([str(i), f'<span class="tag">{esc(f.get("severity") or "medium")}</span>',
                         _cell(f.get("claim"), 300), f"<code>{esc(f.get('module'))}</code>",
                         ref(s.get("path", "?"), int(s.get("line_start") or 0),
                             int(s.get("line_end") or 0)),
                         f"<code>{_cell(f.get('evidence'), 160)}</code>"])
        out.append(section("Risks, ranked", table(["#", "Severity", "Risk", "Module", "Where",
                                                   "Evidence (from the file)"], rows, num={0})
                           if rows else '<p class="muted">No verified risk.</p>', "risks"))
    return "".join(out)


def _fact_rows(q: dict) -> list[list[str]]:
    rows = []
    for state in ("verified", "inferred"):
        for f in q.get(state) or []:
            if not isinstance(f, dict):
                continue
            st = f.get("confidence") or state
            why = f" <span class='small muted'>({esc(f['note'])})</span>" if f.get("note") else ""
            links = "".join(f"<br><span class='small muted'>{label}</span> {_evidence_ref(f[k])}"
                            for k, label in (("definition", "defined at"), ("test", "tested by"))
                            if f.get(k))  # code-links' resolved definition and its test
            rows.append([f'<span class="tag {esc(st)}">{esc(st)}</span>',
                         _cell(f.get("claim"), 300) + why,
                         _evidence_ref(f.get("evidence_path")) + links,
                         f"<code>{_cell(f.get('quote'), 160)}</code>"])
    for r in q.get("rejected") or []:
        if isinstance(r, dict):
            rows.append(['<span class="tag unverified">rejected</span>',
                         _cell(r.get("claim"), 300)
                         + (f" <span class='small muted'>({_cell(r.get('note') or r.get('reason'))})"
                            "</span>" if r.get("note") or r.get("reason") else ""),
                         _evidence_ref(r.get("evidence_path") or ""), ""])
    if q.get("placeholder"):
        rows.append(['<span class="tag placeholder">placeholder</span>',
                     f"<code>{esc(q['placeholder'])}</code>", "—", ""])
    return rows


def mine_sections(rep: dict) -> str:
    out = []
    for i, q in enumerate(rep.get("questions") or [], 1):
        if not isinstance(q, dict):
            continue
        rows = _fact_rows(q)
        scope = f'<p class="small muted">{esc(q["scope"])}</p>' if q.get("scope") else ""
        body = scope + (table(["State", "Claim", "Evidence", "Quote (from the file)"], rows)
                        if rows else '<p class="muted">No fact.</p>')
        out.append(section(f"Q{i}. {q.get('question', '')}", body, f"q{i}"))
    if out:
        out.insert(0, '<p class="small">A fact is <strong>verified</strong> only when code found '
                   "the quoted code at the cited lines and resolved the claim; "
                   "<strong>inferred</strong> facts rest on names or documentation; a question "
                   "without a verified fact keeps its <strong>placeholder</strong>.</p>")
    return "".join(out)
