"""Rendering, apart from the domain: the library returns data (rlm.schemas.Report); this
package turns it into Markdown (markdown.py) and draws progress on a terminal (progress.py)."""

from rlm.render.markdown import answer_markdown, evidence_line, report_markdown

__all__ = ["answer_markdown", "evidence_line", "report_markdown"]
