"""Identifiers a question names without quotes: each is one anchor, never split into parts.

IPv4 and IPv6 addresses (with or without a port), node ids written with a colon
(`R30-M0-N9-C:J16-U01`), HDFS block ids (`blk_-6952295868487656571`), UUIDs, hex ids
(`0x1f`, `deadbeef01`), `name[pid]`, e-mail addresses, paths and URLs. They are found before
the generic identifier patterns of rlm.corpus.grep, which would cut `R30-M0-N9-C:J16-U01` at
its colon and miss an IP (no letter in it).
"""

from __future__ import annotations

import ipaddress
import re

_TRAIL = ".,;:!?)]}'\""
PATTERNS: list[tuple[str, re.Pattern]] = [
    ("url", re.compile(r"\b(?:https?|ftp)://[^\s<>\"'`]+", re.I)),
    ("email", re.compile(r"(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")),
    ("ipv4", re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?(?![\w]|\.\d)")),
    ("ipv6", re.compile(r"(?<![\w:.])\[?(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}\]?"
                        r"(?::\d{1,5})?(?![\w:])")),
    ("node", re.compile(r"(?<![\w:-])[A-Za-z][\w.-]*\d[\w.-]*(?::[A-Za-z0-9][\w.-]*)+"
                        r"(?![\w-])")),
    ("block", re.compile(r"\bblk_-?\d+\b")),
    ("uuid", re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
                        r"[0-9a-fA-F]{12}\b")),
    ("pid", re.compile(r"(?<![\w.-])[A-Za-z][\w.()-]*\[\d+\]")),
    ("path", re.compile(r"(?<![\w.:/~-])~?/(?:[\w.@+-]+/)*[\w.@+-]+/?")),
    ("hex", re.compile(r"(?<![\w-])(?:0x[0-9a-fA-F]+|(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)"
                       r"[0-9a-f]{8,})(?![\w-])")),
]


def _ipv6_ok(tok: str) -> bool:
    core = tok.strip("[]")
    if "]" in tok:
        core = tok[1:tok.index("]")]
    try:
        ipaddress.IPv6Address(core)
    except ValueError:
        return False
    return True


def _ipv4_ok(tok: str) -> bool:
    return all(int(p) <= 255 for p in tok.split(":")[0].split("."))


def find_idents(text: str) -> list[tuple[int, int, str, str]]:
    """(start, end, token, kind) of every identifier, longest first where two overlap."""
    found: list[tuple[int, int, str, str]] = []
    for kind, rx in PATTERNS:
        for m in rx.finditer(text):
            tok = m.group(0).rstrip(_TRAIL) if kind not in ("ipv6", "pid") else m.group(0)
            if kind == "ipv6" and not _ipv6_ok(tok):
                continue
            if kind == "ipv4" and not _ipv4_ok(tok):
                continue
            if kind == "path" and (tok.count("/") < 2 and len(tok) < 5):
                continue  # "/s", "and/or" are not paths
            start = m.start()
            if any(a <= start < b or start <= a < start + len(tok) for a, b, _, _ in found):
                continue  # inside a longer identifier found first (a URL's host, a path)
            found.append((start, start + len(tok), tok, kind))
    return sorted(found)


def blank(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` with the spans replaced by spaces (offsets kept)."""
    chars = list(text)
    for a, b in spans:
        chars[a:b] = " " * (b - a)
    return "".join(chars)
