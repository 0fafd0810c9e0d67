"""One self-contained HTML file of a report: `--html FILE` on ask, audit and mine, and
`rlm show RUN --html FILE` for any recorded run.

It is drawn from the JSON report (the stable contract, as a dict), so runs recorded by older
versions render too: every section reads what is there and is left out when it is absent.
No network: the CSS and the one small script are inline, and the page's own
Content-Security-Policy forbids loading anything. With scripting off only copy-on-click is lost.

Sections: the header and verdict, the answer, the timeline (log answers), the event-kind
table, the audit's module map and graph and risks, the mine's facts, the findings (verified,
then not verified), the coverage map with the statement under it, word for word."""

from __future__ import annotations

from pathlib import Path

from rlm.render.html.coverage import coverage_section
from rlm.render.html.findings import anchors, event_kinds, findings_sections, kinds_section
from rlm.render.html.lanes import lanes_section
from rlm.render.html.page import esc, page, section
from rlm.render.html.repo import audit_sections, mine_sections
from rlm.render.html.text import markdown_html
from rlm.render.kinds import drop_table
from rlm.render.html.timeline import matched_section, timeline_section


def _as_dict(report) -> dict:
    if isinstance(report, dict):
        return report
    return report.model_dump(mode="json")


def _header(rep: dict) -> str:
    c = rep.get("corpus") or {}
    cov = rep.get("coverage") or {}
    cmd = rep.get("command") or "ask"
    title = f"rlm {cmd}: " + (rep.get("question") or c.get("path") or "")
    if rep.get("dry_run"):
        verdict = '<span class="verdict partial">Dry run: nothing was read</span>'
    elif cov.get("complete", True):
        verdict = '<span class="verdict ok">Complete</span>'
    else:
        verdict = ('<span class="verdict partial">INCOMPLETE: the answer may miss what was not '
                   "read</span>")
    facts = [f"<code>{esc(c.get('path'))}</code>",
             f"{int(c.get('bytes') or 0):,} bytes", f"{int(c.get('lines') or 0):,} lines",
             f"{int(c.get('files') or 0):,} file(s)", f"kind {esc(c.get('kind') or '?')}",
             f"strategy <strong>{esc(rep.get('strategy') or '?')}</strong>",
             f"model {esc(rep.get('model') or 'none')}"]
    u = rep.get("usage") or {}
    run = (f'<p class="small muted">Run {esc(rep.get("run_id") or "-")} · '
           f"{int(u.get('calls') or 0):,} call(s)"
           + (f" ({int(u['cached_calls']):,} from the cache)" if u.get("cached_calls") else "")
           + f", {int(u.get('prompt_tokens') or 0):,} prompt + "
           f"{int(u.get('completion_tokens') or 0):,} completion tokens, "
           f"{float(u.get('wall_s') or 0):.1f} s · report version {esc(rep.get('version'))}</p>")
    return (f"<header><h1>{esc(title)}</h1><p>{verdict}</p><p class='small'>"
            + " · ".join(facts) + f"</p>{run}</header>")


def _gate(rep: dict) -> str:
    g = rep.get("gate") or {}
    reasons = [r for r in g.get("reasons") or [] if isinstance(r, str)]
    if not reasons:
        return ""
    return ('<div class="small gate"><strong>How code chose what to read:</strong><ul>'
            + "".join(f"<li>{esc(r)}</li>" for r in reasons) + "</ul></div>")


def _answer(rep: dict) -> str:
    parts = []
    if rep.get("answer"):
        answer = rep["answer"]
        if event_kinds(rep):  # drawn once, in the "Event kinds" section with its examples
            answer = drop_table(answer)
        parts.append(f'<div class="answer">{markdown_html(answer, anchors(rep))}</div>')
    if rep.get("summary"):
        parts.append(f'<div class="answer">{markdown_html(rep["summary"])}</div>'
                     '<p class="small muted">Summary written by the model from the verified '
                     "findings only.</p>")
    a = rep.get("audit") or {}
    if a.get("stop_reason"):
        parts.append(f'<p class="small">Stopped: {esc(a.get("stopped"))} — '
                     f'{esc(a["stop_reason"])}</p>')
    return section("Answer", "".join(parts), "answer") if parts else ""


def report_html(report) -> str:
    """The page for a report (a pydantic Report or its JSON dict)."""
    rep = _as_dict(report)
    cmd = rep.get("command") or "ask"
    body = [_header(rep), _gate(rep), _answer(rep)]
    if cmd not in ("audit", "mine"):
        tl = lanes_section(rep) or timeline_section(rep)
        if tl:  # a log's story in time; elsewhere, where in the corpus the findings are
            is_log = (rep.get("corpus") or {}).get("kind") == "log"
            body.append(section("Timeline" if is_log else "Where the findings are", tl,
                                "timeline"))
        counted = matched_section(rep)
        if counted:
            body.append(section("Where the counted lines are", counted, "counted"))
        body.append(kinds_section(rep))
    if cmd == "audit":
        body.append(audit_sections(rep))
    if cmd == "mine":
        body.append(mine_sections(rep))
    else:
        body.append(findings_sections(rep))
    body.append(section("Coverage", coverage_section(rep), "coverage"))
    title = f"rlm {cmd}: " + (rep.get("question") or (rep.get("corpus") or {}).get("path") or "")
    return page(title, "".join(b for b in body if b))


def write_html(report, path: Path | str) -> None:
    Path(path).write_text(report_html(report), encoding="utf-8")


__all__ = ["report_html", "write_html"]
