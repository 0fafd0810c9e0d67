"""The short text an agent reads first; the full report travels as structured output."""

from __future__ import annotations

from typing import Any

from mcp_types import CallToolResult, TextContent

ANSWER_CHARS = 1500
FINDINGS_SHOWN = 8


def summary_text(rep: Any, notices: list[str]) -> str:
    """Notices, the answer (as rendered, cut), the findings and coverage unless the answer
    already shows them, and the run line."""
    cov = rep.coverage
    lines = list(notices)
    answer = (rep.answer or "").strip()
    if len(answer) > ANSWER_CHARS:
        answer = answer[:ANSWER_CHARS] + " … (cut; the full answer is in the structured report)"
    lines.append(answer or "(no answer)")
    shown = rep.findings[:FINDINGS_SHOWN]
    if shown and "findings" not in answer.lower():
        more = f"; the first {len(shown)}" if len(shown) < len(rep.findings) else ""
        lines.append(f"Findings ({len(rep.findings)}, evidence checked by code{more}):")
        for f in shown:
            s = f.source
            where = f"{s.path}:{s.line_start}" + (f"-{s.line_end}" if s.line_end != s.line_start else "")
            lines.append(f"- {where} {'' if f.verified else '(unverified) '}{f.claim[:200]}")
    statement = cov.statement.strip()
    if statement and statement not in answer:
        lines.append(statement)
    u = rep.usage
    lines.append(f"Run {rep.run_id}: coverage {'complete' if cov.complete else 'INCOMPLETE'}, "
                 f"{u.calls} model call(s), {u.prompt_tokens + u.completion_tokens:,} tokens"
                 + (f" ({u.cached_calls} from cache)" if u.cached_calls else "")
                 + ("" if cov.complete or rep.command != "ask" else "; resume it with the resume tool"))
    return "\n".join(lines)


def report_result(rep: Any, notices: list[str], raw: dict | None = None) -> CallToolResult:
    """Text summary + the report JSON (`raw`: a recorded report, passed on as recorded)."""
    data = raw if raw is not None else rep.model_dump(mode="json")
    if notices and raw is None:
        data["coverage"]["declared"] = list(data["coverage"].get("declared") or []) + notices
    return CallToolResult(content=[TextContent(type="text", text=summary_text(rep, notices))],
                          structured_content=data)
