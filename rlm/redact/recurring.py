"""The secrets a run has found so far, taken wherever they recur (rlm.redact.detect._recurring).

A password seen once in context (`password=X`, `Bearer X`) recurs where no pattern sees it (a
list of search terms, a quote), so every prompt is searched for every secret found before. With
one `str.find` per secret a prompt, that is one pass over the prompt per secret: an access log
with a token in every request (`?access_token=...`) made it quadratic (0.2 MB/s over 20,000
lines, and slower with every line). Here the secrets are kept in Hyperscan literal databases
of growing sizes (as a log-structured merge keeps its runs, FANOUT of a size merged into one):
a prompt is scanned once per database (a few per power of 4 of the secrets' count), the newest
secrets are still found with `str.find`, and each value is compiled O(log n) times a run. Without Hyperscan every
secret is searched with `str.find`, as before.
"""

from __future__ import annotations

import threading
from typing import Iterable, NamedTuple

MIN_CHARS = 6  # shorter values are not searched for (a short word would be everywhere)
PENDING = 1024  # the newest secrets, searched with str.find until they fill a database (a
# compile costs ~6 ms and 15-60 us a value; a find ~1.6 us a 16 KB prompt)
FANOUT = 4  # databases of one size merged into one: each value is compiled again log4(n) times


class _Level(NamedTuple):
    db: object
    values: list[str]
    scratch: object  # Hyperscan's, for this database (scans hold Known's lock)


class Known:
    """Secret values in the order first found (that order settles overlaps, longest first)."""

    def __init__(self, values: Iterable[str] = (), compiled: bool = True):
        self._rank: dict[str, int] = {}
        self._levels: list[_Level] = []
        self._pending: list[str] = []
        self._compiled = compiled and _hyperscan() is not None
        self._lock = threading.Lock()  # a scratch space serves one scan at a time
        self.add(values)

    def __len__(self) -> int:
        return len(self._rank)

    def __contains__(self, value: str) -> bool:
        return value in self._rank

    def add(self, values: Iterable[str]) -> None:
        with self._lock:
            for v in values:
                if len(v) >= MIN_CHARS and v not in self._rank:
                    self._rank[v] = len(self._rank)
                    self._pending.append(v)
                    if self._compiled and len(self._pending) >= PENDING:
                        self._compact()

    def _compact(self) -> None:
        """The pending values become a database; FANOUT databases of one size tier merge
        into one of the next."""
        values, self._pending = self._pending, []
        self._levels.append(self._level(values))
        while len(self._levels) >= FANOUT and len({_tier(len(x.values))
                                                   for x in self._levels[-FANOUT:]}) == 1:
            merged = [v for x in self._levels[-FANOUT:] for v in x.values]
            del self._levels[-FANOUT:]
            self._levels.append(self._level(merged))

    @staticmethod
    def _level(values: list[str]) -> _Level:
        db = _database(values)
        return _Level(db, values, _hyperscan().Scratch(db))

    def recurring(self, text: str, hits, Hit) -> list:
        """What rlm.redact.detect._recurring gives: every non-overlapping occurrence of each
        known secret and of each SECRET among `hits` (this text's own), longest values first
        (then in the order found), each value's occurrences left to right, as `Hit`s."""
        with self._lock:
            return self._recurring(text, hits, Hit)

    def _recurring(self, text: str, hits, Hit) -> list:
        own = [h.value for h in hits if h.kind == "SECRET" and len(h.value) >= MIN_CHARS
               and h.value not in self._rank]
        found: dict[str, list[int]] = {}
        if self._levels and text:
            self._scan(text, found)
        for v in [*self._pending, *dict.fromkeys(own)]:
            i = text.find(v)
            while i >= 0:
                found.setdefault(v, []).append(i)
                i = text.find(v, i + len(v))
        rank = {v: n for n, v in enumerate(dict.fromkeys(own), len(self._rank))}
        order = sorted(found, key=lambda v: (-len(v), self._rank.get(v, rank.get(v))))
        return [Hit(i, i + len(v), "SECRET", v) for v in order for i in found[v]]

    def _scan(self, text: str, found: dict[str, list[int]]) -> None:
        """Occurrences of the compiled values, each value's non-overlapping ones left to right
        (as repeated str.find gives them), as character offsets."""
        from rlm.redact.scan import Encoded

        enc = Encoded(text)
        ends: dict[str, list[int]] = {}
        for level in self._levels:
            values = level.values
            level.db.scan(enc.data, scratch=level.scratch, match_event_handler=lambda i, _s, end,
                          _f, _c: ends.setdefault(values[i], []).append(end))
        for v, at in ends.items():
            size, taken, last = len(v.encode("utf-8", "surrogatepass")), [], -1
            for end in sorted(at):
                if end - size >= last:
                    taken.append(end - size)
                    last = end
            found[v] = taken if enc.ascii else [enc.char(o) for o in taken]  # increasing


def _tier(n: int) -> int:
    return (n // PENDING).bit_length() // 2  # log4 of the size in PENDINGs


def _hyperscan():
    try:
        import hyperscan
    except ImportError:
        return None
    return hyperscan


def _database(values: list[str]):
    from rlm.redact.blocks import literal_database

    return literal_database([v.encode("utf-8", "surrogatepass") for v in values])
