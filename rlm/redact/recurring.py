"""The secrets a run has found so far, taken wherever they recur (rlm.redact.detect._recurring).

A password seen once in context (`password=X`, `Bearer X`) recurs where no pattern sees it (a
list of search terms, a quote), so every prompt is searched for every secret found before. With
one `str.find` per secret a prompt, that is one pass over the prompt per secret: an access log
with a token in every request (`?access_token=...`) made it quadratic (0.2 MB/s over 20,000
lines, and slower with every line).

So once a run knows more than FIND_MAX secrets, they are kept in a suffix index: each value's
last SUFFIX bytes (UTF-8) are a 48-bit key, and a bitmap of the keys' hashes (BITS_PER_VALUE
bits a value) says which windows of a prompt's bytes could end a value. Every window is
hashed and looked up at once with array operations (about 10 us per 16 KB prompt); only the
windows the bitmap lets through (the true ends, and at most one in 256 of the rest) are
compared in Python. Adding a value costs one bit and a dict entry: Hyperscan literal databases,
used before, cost ~15 us a value at every compile and were compiled again at each merge (a
third of the redaction of a log with a key on every line).

Past MEMORY_SECRETS secrets in memory (~320 bytes each), they move to temporary disk
(rlm.redact.spill.SecretsOnDisk, keyed the same way) and the bitmap stops growing: a window it
lets through is then looked up on disk too, and more of them end no value as secrets are
added (at most one in 256 at the cap, one in 13 at 20 times it). Memory then stays flat: a log
with a new token on every line no longer grows without bound.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Iterable

import numpy as np

if TYPE_CHECKING:
    from rlm.redact.spill import SecretsOnDisk

MIN_CHARS = 6  # shorter values are not searched for (a short word would be everywhere)
SUFFIX = 6  # bytes of a value's end that key it (every value has MIN_CHARS characters)
FIND_MAX = 32  # up to this many secrets, each is found with str.find (~1.6 us a 16 KB prompt)
BITS_PER_VALUE = 256  # bitmap size: at most one window in 256 that ends no value is compared
# (32-64 bytes a value, next to the ~300 the Redactor keeps for it)
MEMORY_SECRETS = 200_000  # secrets held in memory (~320 bytes each); past it they move to
# temporary disk (rlm.redact.spill.SecretsOnDisk) and the bitmap stops growing
WINDOWS = 1 << 20  # windows hashed at once (8 bytes each): a large text is read in parts
_MASK48 = (1 << 48) - 1
_GOLDEN = 0x9E3779B97F4A7C15  # Fibonacci hashing: the key times this, its top bits


class Known:
    """Secret values in the order first found (that order settles overlaps, longest first).
    compiled: an index once there are many (False: always str.find, for a few values)."""

    def __init__(self, values: Iterable[str] = (), compiled: bool = True):
        self._rank: dict[str, int] = {}  # in memory: the rest are on disk (the index's)
        self._count = 0  # secrets known, in memory and on disk
        self._index: _SuffixIndex | None = None
        self._compiled = compiled
        self._lock = threading.Lock()  # adds and searches from a run's threads
        self.add(values)

    def __len__(self) -> int:
        return self._count

    def __contains__(self, value: str) -> bool:
        with self._lock:
            return bool(self._known([value]))

    def _known(self, values: list[str]) -> dict[str, int]:
        """The ranks of those of the values known already."""
        out = {v: self._rank[v] for v in values if v in self._rank}
        if self._index is not None and self._index.disk is not None:
            out.update(self._index.on_disk([v for v in values if v not in out]))
        return out

    def add(self, values: Iterable[str]) -> None:
        with self._lock:
            fresh = list(dict.fromkeys(v for v in values if len(v) >= MIN_CHARS))
            known = self._known(fresh)
            new = [v for v in fresh if v not in known]
            self._rank.update(zip(new, range(self._count, self._count + len(new))))
            self._count += len(new)
            if self._index is not None:
                self._index.add(new)
            elif self._compiled and self._count > FIND_MAX:
                self._index = _SuffixIndex(self._rank)
            if self._index is not None and len(self._rank) > MEMORY_SECRETS:
                self._index.spill(self._rank)
                self._rank.clear()

    def recurring(self, text: str, hits, Hit) -> list:
        """What rlm.redact.detect._recurring gives: every non-overlapping occurrence of each
        known secret and of each SECRET among `hits` (this text's own), longest values first
        (then in the order found), each value's occurrences left to right, as `Hit`s."""
        with self._lock:
            return self._recurring(text, hits, Hit)

    def _recurring(self, text: str, hits, Hit) -> list:
        own = [h.value for h in hits if h.kind == "SECRET" and len(h.value) >= MIN_CHARS]
        ranks = self._known(own) if own else {}  # of the secrets known, on disk too
        own = [v for v in own if v not in ranks]
        found: dict[str, list[int]] = {}
        if self._index is not None:
            if text:
                self._index.find(text, found, ranks)
            by_find = dict.fromkeys(own)
        else:
            by_find = dict.fromkeys([*self._rank, *own])
        for v in by_find:
            i = text.find(v)
            while i >= 0:
                found.setdefault(v, []).append(i)
                i = text.find(v, i + len(v))
        ranks.update((v, n) for n, v in enumerate(dict.fromkeys(own), self._count))
        order = sorted(found, key=lambda v: (-len(v), self._rank.get(v, ranks.get(v))))
        return [Hit(i, i + len(v), "SECRET", v) for v in order for i in found[v]]


class _SuffixIndex:
    """Values keyed by their last SUFFIX bytes, with a bitmap of the keys' hashes."""

    def __init__(self, values: Iterable[str]):
        # key -> the value, or the values when several share it (rare): a list and a tuple of
        # bytes a value cost ~190 of the ~440 bytes a value took here
        self._by_key: dict[int, str | list[str]] = {}
        self._count = 0
        self._bits = None
        self._shift = 64
        self.disk: SecretsOnDisk | None = None  # the values moved out of memory (spill)
        self.add(values)

    def spill(self, ranks: dict[str, int]) -> None:
        """The values in memory move to disk; the bitmap keeps their keys' bits and stops
        growing (more of the windows it lets through then end no value: looked up on disk)."""
        if self.disk is None:
            from rlm.redact.spill import SecretsOnDisk

            self.disk = SecretsOnDisk(MEMORY_SECRETS)
        self.disk.put((ranks[v], key, v) for key, entry in self._by_key.items()
                      for v in _each(entry))
        self._by_key.clear()

    def on_disk(self, values: list[str]) -> dict[str, int]:
        """The ranks of those of the values that are on disk."""
        keys = {_key(v): v for v in values}
        found = self.disk.by_keys(keys) if keys else {}
        wanted = set(values)
        return {v: r for entries in found.values() for v, r in entries if v in wanted}

    def add(self, values: Iterable[str]) -> None:
        for v in values:
            key = _key(v)
            had = self._by_key.get(key)
            self._by_key[key] = v if had is None else [*_each(had), v]
            self._count += 1
            if self.disk is None and (self._bits is None
                                      or self._count * BITS_PER_VALUE > len(self._bits) * 8):
                self._resize()  # sets every key's bit, this one's too
            else:
                h = ((key * _GOLDEN) & 0xFFFFFFFFFFFFFFFF) >> self._shift
                self._bits[h >> 3] |= 1 << (h & 7)

    def _resize(self) -> None:
        """A bitmap of at least BITS_PER_VALUE bits a value (a power of two), from the keys."""
        size = 1 << max(16, (self._count * BITS_PER_VALUE * 2 - 1).bit_length())
        self._shift = 64 - (size.bit_length() - 1)
        keys = np.fromiter(self._by_key, np.uint64, len(self._by_key))
        h = (keys * np.uint64(_GOLDEN)) >> np.uint64(self._shift)
        bits = np.zeros(size >> 3, np.uint8)
        np.bitwise_or.at(bits, h >> np.uint64(3), (1 << (h & np.uint64(7))).astype(np.uint8))
        self._bits = bits

    def find(self, text: str, found: dict[str, list[int]], ranks: dict[str, int]) -> None:
        """Each value's non-overlapping occurrences in text, left to right (as repeated
        str.find gives them), as character offsets, into found; the ranks of those found on
        disk into ranks."""
        from rlm.redact.scan import Encoded

        enc = Encoded(text)
        data = enc.data
        ends: dict[str, list[int]] = {}
        for start in range(0, max(0, len(data) - SUFFIX + 1), WINDOWS):
            self._ends(data, start, min(start + WINDOWS, len(data) - SUFFIX + 1), ends, ranks)
        for v, at in ends.items():
            size, taken, last = len(v.encode("utf-8", "surrogatepass")), [], -1
            for end in at:  # increasing
                if end - size >= last:
                    taken.append(end - size)
                    last = end
            found[v] = taken if enc.ascii else [enc.char(o) for o in taken]  # increasing

    def _ends(self, data: bytes, a: int, b: int, ends: dict[str, list[int]],
              ranks: dict[str, int]) -> None:
        """The ends of the values whose last SUFFIX bytes are the windows starting at a..b-1."""
        part = data[a:b + 7]  # the 8 bytes read from each window's start
        part += bytes(b - a + 7 - len(part))
        windows = np.ndarray((b - a,), "<u8", part, 0, (1,)) & np.uint64(_MASK48)
        h = (windows * np.uint64(_GOLDEN)) >> np.uint64(self._shift)
        may = (self._bits[h >> np.uint64(3)] >> (h & np.uint64(7)).astype(np.uint8)) & 1
        by_key, passed = self._by_key, np.flatnonzero(may)
        keys = windows[passed].tolist()
        on_disk = self.disk.by_keys(set(keys)) if self.disk is not None and keys else {}
        for p, key in zip(passed.tolist(), keys):
            spilled = on_disk.get(key, ())
            ranks.update(spilled)
            for v in (*_each(by_key.get(key, ())), *(v for v, _ in spilled)):
                raw = v.encode("utf-8", "surrogatepass")
                end = a + p + SUFFIX
                if end >= len(raw) and data.startswith(raw, end - len(raw)):
                    ends.setdefault(v, []).append(end)


def _each(entry: str | list[str]) -> list[str] | tuple[str, ...]:
    return (entry,) if isinstance(entry, str) else entry


def _key(value: str) -> int:
    """A value's last SUFFIX bytes (UTF-8), as an integer: what the index keys it by."""
    return int.from_bytes(value.encode("utf-8", "surrogatepass")[-SUFFIX:], "little")
