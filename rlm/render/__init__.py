"""Rendering, apart from the domain: the library returns data (rlm.schemas.report.Report); this
package turns it into Markdown (markdown.py for ask, audit.py and mine.py for the repository
commands) and draws progress on a terminal (progress.py)."""

from rlm.render.audit import audit_markdown
from rlm.render.markdown import answer_markdown, evidence_line, report_markdown
from rlm.render.mine import mine_markdown


def repo_markdown(report, link_base: str = "") -> str:
    """Markdown of an audit or mine report."""
    if report.command == "audit":
        return audit_markdown(report, link_base)
    return mine_markdown(report, link_base)


__all__ = ["answer_markdown", "audit_markdown", "evidence_line", "mine_markdown", "repo_markdown",
           "report_markdown"]
