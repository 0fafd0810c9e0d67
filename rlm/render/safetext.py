"""File names (and other untrusted strings) made safe to show in Markdown and on a terminal.

A file name may hold a newline (a fake heading or list item in the report), a right-to-left
override (U+202E: `gnp.exe` shown for `exe.png`), other bidi controls, zero-width characters or
a terminal escape. `visible` shows each of them as an escape (`\\n`, `\\u202e`, `\\x1b`);
`code` puts the result in a code span that no backtick in the name can close; `text` escapes
Markdown's own characters for places outside a code span.
"""

from __future__ import annotations

import re
import unicodedata

# C0/C1 controls, DEL, and the format characters that reorder or hide text
_BIDI_AND_HIDDEN = "\u061c\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e" \
                   "\u2060\u2066\u2067\u2068\u2069\ufeff"
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f" + _BIDI_AND_HIDDEN + "]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+!|~])")


def _escape(ch: str) -> str:
    if ch in _NAMED:
        return _NAMED[ch]
    n = ord(ch)
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}"


def visible(s: str) -> str:
    """s with every control, bidi and zero-width character written as an escape."""
    s = str(s)
    if not _UNSAFE.search(s) and not any(unicodedata.category(c) == "Cf" for c in s if ord(c) > 127):
        return s
    out = _UNSAFE.sub(lambda m: _escape(m.group(0)), s)
    return "".join(_escape(c) if ord(c) > 127 and unicodedata.category(c) == "Cf" else c
                   for c in out)


def code(s: str) -> str:
    """A Markdown code span of visible(s), fenced with more backticks than s holds in a row."""
    v = visible(s)
    longest = max((len(r) for r in re.findall(r"`+", v)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if v.startswith("`") or v.endswith("`") or not v else ""
    return f"{fence}{pad}{v}{pad}{fence}"


def text(s: str) -> str:
    """visible(s) with Markdown's special characters backslash-escaped (outside a code span)."""
    return _MD_SPECIAL.sub(r"\\\1", visible(s))


def link_target(target: str) -> str:
    """A link target with everything but path characters percent-encoded (a space, a
    parenthesis or a newline would end the link early or break the line)."""
    from urllib.parse import quote

    return quote(target, safe="/#:.-_~")
