"""Is a candidate anchor rare in the corpus? A bounded code count, before the gate decides.

`keen-jacket` and `follow-up` look alike in a question; only the corpus tells them apart. The
gate counts the lines that hold each weak candidate (rlm.corpus.grep.candidate_anchors): one
that is present and rare (on at most RARE_MAX_LINES lines, and on at most RARE_MAX_SHARE of all
lines or RARE_FLOOR_LINES, whichever is more)
is searched for like an id; a common or absent one is not. The count stops early once a
candidate is common, honours Ctrl-C every block (checkpoint) and has a time budget: what was
not finished in time is not an anchor, and the reason says so.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from rlm.corpus.source import TextSource
from rlm.engine.interrupt import checkpoint
from rlm.words import n_

RARE_MAX_LINES = 50
RARE_MAX_SHARE = 0.01
RARE_FLOOR_LINES = 5  # a few needles in a small file are still rare
BUDGET_S = 2.0
_BLOCK = 1 << 22  # Ctrl-C and the clock are looked at every 4 MB


@dataclass
class Rarity:
    candidate: str
    lines: int  # lines holding it (counted up to the first that makes it common)
    total_lines: int
    finished: bool  # False: the count stopped early (common already, or out of time)
    timed_out: bool = False

    @property
    def rare(self) -> bool:
        return not self.timed_out and 1 <= self.lines <= _limit(self.total_lines)

    def reason(self) -> str:
        """For the gate's reasons: the count is code's (a scan), never a model's."""
        head, where = f"code count (a scan, no model call): {self.candidate!r}", n_(
            self.total_lines, "line")
        if self.timed_out:
            return (f"{head} stopped after its {BUDGET_S:g}s budget ({self.lines:,} lines so "
                    "far), so it is not an anchor")
        if self.rare:
            return f"{head} occurs on {self.lines:,} of {where}: rare, so it is an anchor"
        if self.lines == 0:
            return f"{head} occurs on no line of {where}: not an anchor"
        more = "" if self.finished else " or more"
        return (f"{head} occurs on {self.lines:,}{more} of {where}: too common to be an "
                "anchor")


def _limit(total_lines: int) -> int:
    return min(RARE_MAX_LINES, max(RARE_FLOOR_LINES, int(RARE_MAX_SHARE * total_lines)))


def count_lines(sources: list[TextSource], candidate: str, total_lines: int,
                deadline: float) -> Rarity:
    """Lines holding `candidate` (case-insensitive) across `sources`, stopping one line past
    the rarity limit or at `deadline` (time.monotonic())."""
    rx = re.compile(re.escape(candidate.encode("utf-8")), re.IGNORECASE)
    overlap = len(candidate.encode("utf-8")) - 1
    limit, lines = _limit(total_lines), 0
    for src in sources:
        data, size, pos = src.data, src.size, 0
        while pos < size:
            checkpoint(pos, size)
            if time.monotonic() > deadline:
                return Rarity(candidate, lines, total_lines, False, timed_out=True)
            end = min(size, pos + _BLOCK)
            m = rx.search(data, pos, min(size, end + overlap))
            if m is None or m.start() >= end:
                pos = end
                continue
            lines += 1
            if lines > limit:
                return Rarity(candidate, lines, total_lines, False)
            nl = data.find(b"\n", m.end())  # one count per line: go on after this line
            pos = size if nl < 0 else nl + 1
    return Rarity(candidate, lines, total_lines, True)


def rare_candidates(sources: list[TextSource], candidates: list[str], total_lines: int,
                    budget_s: float = BUDGET_S) -> list[Rarity]:
    """One Rarity per candidate, in order, all within one time budget."""
    deadline = time.monotonic() + budget_s
    return [count_lines(sources, c, total_lines, deadline) for c in candidates]
