"""Is a candidate anchor rare in the corpus? A bounded code count, before the gate decides.

`keen-jacket` and `follow-up` look alike in a question; only the corpus tells them apart. The
gate counts the lines that hold each weak candidate (rlm.corpus.grep.candidate_anchors): one
that is present and rare (on at most RARE_MAX_LINES lines, and on at most RARE_MAX_SHARE of all
lines or RARE_FLOOR_LINES, whichever is more)
is searched for like an id; a common or absent one is not. The count runs shard by shard on
the run's executor (worker processes, or Ray tasks), each shard stopping once every candidate
is common there; it honours Ctrl-C every block (checkpoint) and has a time budget: what was
not finished in time (or in a shard no worker could count) is not an anchor, and the reason
says so.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from rlm.corpus.counter import read_blocks
from rlm.corpus.source import TextSource
from rlm.engine.interrupt import checkpoint
from rlm.executor.scan import scan_shards
from rlm.executor.shards import Shard
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
    failed: bool = False  # a shard of the corpus could not be counted (its worker died twice)

    @property
    def rare(self) -> bool:
        return (not self.timed_out and not self.failed
                and 1 <= self.lines <= _limit(self.total_lines))

    def reason(self) -> str:
        """For the gate's reasons: the count is code's (a scan), never a model's."""
        head, where = f"code count (a scan, no model call): {self.candidate!r}", n_(
            self.total_lines, "line")
        if self.timed_out:
            return (f"{head} stopped after its {BUDGET_S:g}s budget ({self.lines:,} lines so "
                    "far), so it is not an anchor")
        if self.failed:
            return f"{head} could not scan every shard of the corpus, so it is not an anchor"
        if self.rare:
            return f"{head} occurs on {self.lines:,} of {where}: rare, so it is an anchor"
        if self.lines == 0:
            return f"{head} occurs on no line of {where}: not an anchor"
        more = "" if self.finished else " or more"
        return (f"{head} occurs on {self.lines:,}{more} of {where}: too common to be an "
                "anchor")


def _limit(total_lines: int) -> int:
    return min(RARE_MAX_LINES, max(RARE_FLOOR_LINES, int(RARE_MAX_SHARE * total_lines)))


@dataclass
class RarityPart:
    """One shard's count: per candidate, the lines holding it (capped one past the limit), and
    whether the time budget ran out first."""

    counts: list[int]
    timed_out: bool = False


def rarity_shard(path: str, start: int, end: int, threads: int, candidates: tuple[str, ...],
                 limit: int, deadline: float) -> RarityPart:
    """Lines of bytes [start, end) holding each candidate (case-insensitive), one count per
    line, each count stopping one line past `limit`; stops at `deadline` (time.time(): the
    same clock on every node). Runs in this process, a worker process or a Ray task."""
    rxs = [re.compile(re.escape(c.encode("utf-8")), re.IGNORECASE) for c in candidates]
    part = RarityPart([0] * len(candidates))
    for at, block in read_blocks(path, start, end, _BLOCK):
        checkpoint(at - start, end - start)
        if time.time() > deadline:
            part.timed_out = True
            return part
        for i, rx in enumerate(rxs):
            pos, n = 0, part.counts[i]
            while n <= limit and (m := rx.search(block, pos)) is not None:
                n += 1
                nl = block.find(b"\n", m.end())  # one count per line: go on after this line
                pos = len(block) if nl < 0 else nl + 1
            part.counts[i] = n
        if all(n > limit for n in part.counts):
            break
    return part


@dataclass
class _Sum:
    counts: list[int]
    timed_out: bool = False


def _merge(total: _Sum, part: RarityPart, shard: Shard) -> None:
    total.counts = [a + b for a, b in zip(total.counts, part.counts)]
    total.timed_out |= part.timed_out


def _skip(total: _Sum, shard: Shard, lines: int) -> None:
    pass  # a shard no worker could count: the scan's `failed` says so


def rare_candidates(sources: list[TextSource], candidates: list[str], total_lines: int,
                    budget_s: float = BUDGET_S) -> list[Rarity]:
    """One Rarity per candidate, in order, all within one time budget, counted shard by shard
    on the run's executor (every shard stops once each candidate is common there)."""
    if not candidates:
        return []
    limit = _limit(total_lines)
    total = _Sum([0] * len(candidates))
    res = scan_shards([str(s.path) for s in sources if s.size], rarity_shard,
                      (tuple(candidates), limit, time.time() + budget_s), total, _merge, _skip,
                      RarityPart, keep=False, light=True)
    unsure = total.timed_out or bool(res.failed)
    return [Rarity(c, min(n, limit + 1), total_lines, n <= limit and not unsure,
                   timed_out=total.timed_out, failed=bool(res.failed))
            for c, n in zip(candidates, total.counts)]
