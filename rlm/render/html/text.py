"""The answer's Markdown as HTML, enough of it for what rlm writes: paragraphs, bullet and
numbered lists, tables, headings, **bold** and `code`. Everything is escaped first. A
``path:line`` that is a finding's place links to that finding (``anchors``), so a row of the
event-kind table leads to its example lines; one in a file of the corpus that is no finding
(``anchors`` holds ``"path:"`` for each such file) copies on click like every other."""

from __future__ import annotations

import re

from rlm.render.html.page import esc

_BOLD = re.compile(r"\*\*(.+?)\*\*")
_EM = re.compile(r"(?<![\w*])_(\S(?:.*?\S)?)_(?![\w*])")
_CODE = re.compile(r"`([^`\n]+)`")
_BULLET = re.compile(r"^\s*[-*] (.*)")
_NUMBER = re.compile(r"^\s*(\d+)[.)] (.*)")
_HEAD = re.compile(r"^(#{1,6}) (.*)")
_REF = re.compile(r"(?<![\w/.-])([\w./-]+:\d+)(?![\d-])")
_NUM = re.compile(r"^[\d,.%]+$")
_RULE = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?$")


def inline_md(text: str, anchors: dict[str, str] | None = None) -> str:
    """Escaped text with `code`, **bold** and _emphasis_ (code spans are left as they are),
    and a finding's ``path:line`` as a link to it."""
    parts = _CODE.split(esc(text))
    out = []
    for i, p in enumerate(parts):
        if i % 2:
            out.append(f"<code>{p}</code>")
        else:
            out.append(_EM.sub(r"<em>\1</em>", _BOLD.sub(r"<strong>\1</strong>", p)))
    html = "".join(out)
    if anchors:
        html = _REF.sub(lambda m: _place(m.group(1), anchors), html)
    return html


def _place(token: str, anchors: dict[str, str]) -> str:
    if anchors.get(token):
        return f'<a href="#{anchors[token]}">{token}</a>'
    if token.rsplit(":", 1)[0] + ":" in anchors:  # a line of a corpus file
        return f'<code class="ref">{token}</code>'
    return token


def _cells(line: str) -> list[str]:
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]


def _table(lines: list[str], anchors) -> str:
    head = "".join(f"<th>{inline_md(c, anchors)}</th>" for c in _cells(lines[0]))
    rows = "".join("<tr>" + "".join(
        f"<td{' class=num' if _NUM.match(c) else ''}>{inline_md(c.replace(chr(92) + '|', '|'), anchors)}</td>"
        for c in _cells(ln)) + "</tr>" for ln in lines[2:])
    return (f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody>'
            "</table></div>")


def markdown_html(text: str, anchors: dict[str, str] | None = None) -> str:
    """Blocks split on blank lines; a block of list items is a list, a `#` line a heading, a
    block of `|` rows under a `|---|` rule a table."""
    out = []
    for block in re.split(r"\n\s*\n", text.strip()):
        lines = block.split("\n")
        head = _HEAD.match(lines[0])
        if len(lines) >= 2 and lines[0].lstrip().startswith("|") and _RULE.match(lines[1].strip()):
            out.append(_table(lines, anchors))
            continue
        if head and len(lines) == 1:
            level = min(6, len(head.group(1)) + 2)
            out.append(f"<h{level}>{inline_md(head.group(2), anchors)}</h{level}>")
        elif all(_BULLET.match(ln) for ln in lines):
            out.append("<ul>" + "".join(f"<li>{inline_md(_BULLET.match(ln).group(1), anchors)}</li>"
                                        for ln in lines) + "</ul>")
        elif all(_NUMBER.match(ln) for ln in lines):
            start = int(_NUMBER.match(lines[0]).group(1))  # items apart keep their numbers
            out.append(f'<ol start="{start}">' + "".join(
                f"<li>{inline_md(_NUMBER.match(ln).group(2), anchors)}</li>" for ln in lines)
                + "</ol>")
        else:
            out.append("<p>" + "<br>".join(inline_md(ln, anchors) for ln in lines) + "</p>")
    return "".join(out)
