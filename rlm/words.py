"""Counts that read as English: "1 line", "2 lines", "1 call" (never "line(s)")."""

from __future__ import annotations

_IRREGULAR = {"match": "matches", "story": "stories"}


def n_(n: int, word: str, plural: str | None = None) -> str:
    """`n` and the word in the right number: n_(1, "line") -> "1 line"; n_(1200, "call") ->
    "1,200 calls"."""
    if n == 1:
        return f"1 {word}"
    return f"{n:,} {plural or _IRREGULAR.get(word) or word + 's'}"
