"""Where a Markdown report goes: rendered by rich on a terminal (headings, emphasis, lists; long
paragraphs such as the coverage statement wrap to the window), plain Markdown when piped or
written with --out, so files and pipes stay Markdown."""

from __future__ import annotations

import sys

from rich.console import Console


def print_markdown(md: str, file=None) -> None:
    out = file or sys.stdout
    if out.isatty():
        from rich.markdown import Markdown

        Console(file=out, highlight=False).print(Markdown(md, hyperlinks=False))
    else:
        Console(file=out, highlight=False, soft_wrap=True).print(md, markup=False)
