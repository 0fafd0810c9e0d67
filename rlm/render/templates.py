"""The template table as text (one row per event kind) and as JSON (`rlm templates`)."""

from __future__ import annotations

from rlm.corpus.logset import where
from rlm.corpus.templates import TemplateTable

TEMPLATE_CHARS = 160  # a template longer than this is cut in the text table (never in JSON)


def _span(table: TemplateTable, k, src) -> str:
    lines = (f"line {_at(src, k.first_line)}" if k.first_line == k.last_line
             else f"lines {_at(src, k.first_line)}-{_at(src, k.last_line)}")
    if k.first_seen:
        when = k.first_seen if k.first_seen == k.last_seen else f"{k.first_seen} .. {k.last_seen}"
        return f"{lines}, {when}"
    return lines


def _at(src, n: int) -> str:
    f, local = where(src, n)
    return str(local) if f is src else f"{f.display}:{local}"


def table_text(table: TemplateTable, src) -> str:
    kinds = table.templates
    head = (f"{len(kinds):,} event kinds in {table.lines:,} lines "
            "(variables as <*>; counts are exact)")
    rows = [head]
    if table.overflow:
        rows.append("note: more distinct line shapes than tracked; lines of the others have no "
                    "template (id 0 in --assign)")
    width = len(str(len(kinds)))
    for k in kinds:
        text = k.template if len(k.template) <= TEMPLATE_CHARS else k.template[:TEMPLATE_CHARS] + " …"
        sev = "" if k.rank is None else f" [{k.severity}]"
        rows.append(f"{k.id:>{width}}  {k.count:>8,}  {text}{sev}")
        rows.append(f"{'':>{width}}  {'':>8}  {_span(table, k, src)}")
    return "\n".join(rows)


def table_json(table: TemplateTable, src) -> dict:
    """The table; `first_line`/`last_line` are global over a folder, `first`/`last` name the
    file and its own line."""
    def at(n: int) -> dict:
        f, local = where(src, n)
        return {"path": f.display, "line": local}

    files = getattr(src, "sources", [src])
    return {"paths": [f.display for f in files], "lines": table.lines,
            "event_kinds": len(table.templates), "overflow": table.overflow,
            "templates": [dict(k.as_dict(), first=at(k.first_line), last=at(k.last_line))
                          for k in table.templates]}
