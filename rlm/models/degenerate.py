"""Degenerate generation: a weak model that starts repeating a fragment ("nice_nice_nice_…",
"0.000000.000000…") never recovers, so the stream is cut as soon as the repetition is certain
instead of running to max_tokens."""

from __future__ import annotations

MIN_REPEATS = 6  # a fragment seen this many times in a row at the end of the text
MIN_SPAN = 48  # ...covering at least this many characters
MAX_FRAGMENT = 40


def repeating_tail(text: str, min_repeats: int = MIN_REPEATS, min_span: int = MIN_SPAN,
                   max_fragment: int = MAX_FRAGMENT) -> str | None:
    """The fragment the text ends by repeating, when it does so degenerately; else None.
    Whitespace-only fragments (indentation) are not degenerate."""
    n = len(text)
    for size in range(1, max_fragment + 1):
        reps = max(min_repeats, -(-min_span // size))
        if reps * size > n:
            break
        frag = text[n - size:]
        if not frag.strip():
            continue
        if text[n - reps * size:] == frag * reps:
            return frag
    return None
