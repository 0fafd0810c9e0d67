"""One window sizer and one set of line helpers for every command."""

from __future__ import annotations

from rlm.corpus.grep import regions
from rlm.corpus.lines import CUT_MARK, MAX_LINE_CHARS, merge_ranges, number_lines
from rlm.models.base import Model
from rlm.engine.window import PROMPT_OVERHEAD_TOKENS, size_window, window_chars


class _M(Model):
    def __init__(self, name: str, ctx: int):
        self.name, self.context_tokens = name, ctx

    async def complete(self, *a, **k):  # never called here
        raise AssertionError

    def count_tokens(self, text: str) -> int:
        return len(text) // 4


def test_the_smallest_context_sets_the_window_and_audit_mine_use_the_same_rule():
    big, small = _M("big", 32_000), _M("small", 8192)
    w = size_window([big, small], 0.5)
    assert w.tokens == int(8192 * 0.5) - PROMPT_OVERHEAD_TOKENS and w.note is None
    assert size_window([big, big], 0.5).tokens == int(32_000 * 0.5) - PROMPT_OVERHEAD_TOKENS
    assert window_chars(small, 0.5) == w.chars()  # repository calls: the same window in chars
    assert window_chars(small, 0.5, override=900) == 900


def test_number_lines_marks_cuts_and_keeps_file_numbers():
    text, cuts = number_lines(["a\tb", "x" * (MAX_LINE_CHARS + 5)], 41)
    first, second = text.split("\n")
    assert first == "41| a    b" and second.startswith("42| x") and second.endswith(CUT_MARK)
    assert cuts == 1
    assert number_lines(["y"], 7, width=3)[0] == "  7| y"


def test_one_range_merger():
    assert merge_ranges([(5, 9), (1, 2), (3, 4), (20, 21)]) == [(1, 9), (20, 21)]
    assert regions([10, 12, 40], 2, 41) == [(8, 14), (38, 41)]
