"""The answer's Markdown as HTML, enough of it for what rlm writes: paragraphs, bullet and
numbered lists, headings, **bold** and `code`. Everything is escaped first."""

from __future__ import annotations

import re

from rlm.render.html.page import esc

_BOLD = re.compile(r"\*\*(.+?)\*\*")
_EM = re.compile(r"(?<![\w*])_(\S(?:.*?\S)?)_(?![\w*])")
_CODE = re.compile(r"`([^`\n]+)`")
_BULLET = re.compile(r"^\s*[-*] (.*)")
_NUMBER = re.compile(r"^\s*(\d+)[.)] (.*)")
_HEAD = re.compile(r"^(#{1,6}) (.*)")


def inline_md(text: str) -> str:
    """Escaped text with `code`, **bold** and _emphasis_ (code spans are left as they are)."""
    parts = _CODE.split(esc(text))
    out = []
    for i, p in enumerate(parts):
        if i % 2:
            out.append(f"<code>{p}</code>")
        else:
            out.append(_EM.sub(r"<em>\1</em>", _BOLD.sub(r"<strong>\1</strong>", p)))
    return "".join(out)


def markdown_html(text: str) -> str:
    """Blocks split on blank lines; a block of list items is a list, a `#` line a heading."""
    out = []
    for block in re.split(r"\n\s*\n", text.strip()):
        lines = block.split("\n")
        head = _HEAD.match(lines[0])
        if head and len(lines) == 1:
            level = min(6, len(head.group(1)) + 2)
            out.append(f"<h{level}>{inline_md(head.group(2))}</h{level}>")
        elif all(_BULLET.match(ln) for ln in lines):
            out.append("<ul>" + "".join(f"<li>{inline_md(_BULLET.match(ln).group(1))}</li>"
                                        for ln in lines) + "</ul>")
        elif all(_NUMBER.match(ln) for ln in lines):
            start = int(_NUMBER.match(lines[0]).group(1))  # items apart keep their numbers
            out.append(f'<ol start="{start}">' + "".join(
                f"<li>{inline_md(_NUMBER.match(ln).group(2))}</li>" for ln in lines) + "</ol>")
        else:
            out.append("<p>" + "<br>".join(inline_md(ln) for ln in lines) + "</p>")
    return "".join(out)
