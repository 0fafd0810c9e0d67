"""A run's placeholders past what its Redactor keeps in memory, on temporary disk.

A Redactor remembers every value it replaced, so that the same value gets the same placeholder
in every prompt and a reply's placeholders map back to the file's text. In memory that is about
320 bytes an address (and a secret's recurrence index, rlm.redact.recurring, ~320 more): a log
of 15 million distinct client addresses would have held 5 GB. Past
rlm.redact.redactor.MEMORY_VALUES values, the Redactor moves what it holds here, a SQLite file
in the temporary directory (mode 0600, removed when the run ends: it holds the values, which
never leave the machine), and looks there for what it no longer holds. Its size counts against
the run's one cap on temporary disk (rlm.corpus.spool, RLM_SPOOL_LIMIT).

What stays in memory past the cap is a Bloom filter of what was moved, 1.25 bytes a value, so
that a value never seen before (most, in an address-dense log) costs no look-up on disk. The
price is time: a row on disk costs ~5 us to write (its hash indexed). In
python -m evals.bench_redactor_memory, 1.2 million new addresses took 128 MB against 376 and
2x the CPU time, the generation of the log's text included. The recurrence index of the
secrets (rlm.redact.recurring) moves its own past rlm.redact.recurring.MEMORY_SECRETS into a
second file of the same kind (SecretsOnDisk).
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
import weakref
from itertools import compress, islice
from typing import Iterable, Iterator

import numpy as np

from rlm.corpus.spool import spool_budget
from rlm.redact.kinds import KINDS as _KINDS
from rlm.redact.kinds import PLACEHOLDER as _SHOWN

BLOOM_BITS = 10  # bits a value in the filter of each spilled batch: ~1% of the values asked
# that were never spilled are looked up on disk anyway (7 bits set a value)
BLOOM_HASHES = 7
ROW_BYTES = 40  # what SQLite takes a row beyond its value, with the index on hashes
PUT_ROWS = 20_000  # rows written at a time: their Python copies are the spill's peak memory
QUERY_KEYS = 400  # values looked up in one statement (SQLite allows 32,766 parameters)


class _ScratchDb:
    """A SQLite file of one table in the temporary directory: mode 0600 (mkstemp), no journal,
    its bytes taken from the run's spool budget as rows go in, removed and given back at
    close, when its owner goes, or at exit."""

    def __init__(self, name: str, columns: str, index: str, display: str) -> None:
        self._display, self._table = display, name
        fd, self.path = tempfile.mkstemp(prefix=f"rlm-{name}-", suffix=".sqlite")
        os.close(fd)
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=OFF")  # a scratch file: nothing to recover
        self._db.execute("PRAGMA synchronous=OFF")
        self._db.execute(f"CREATE TABLE {name} ({columns})")
        self._db.execute(f"CREATE INDEX {name}_by_{index} ON {name} ({index})")
        self._held = [0]  # bytes taken from the spool budget (shared with the finalizer)
        self._closer = weakref.finalize(self, _close, self._db, self.path, self._held)

    def _insert(self, rows: list[tuple[int, int, bytes]]) -> None:
        """Rows of (an integer key, an integer, a value's bytes), the spool cap checked first."""
        size = sum(len(raw) for _, _, raw in rows) + ROW_BYTES * len(rows)
        spool_budget.take(size, self._display)
        self._held[0] += size
        self._db.execute("BEGIN")
        self._db.executemany(f"INSERT INTO {self._table} VALUES (?, ?, ?)", rows)
        self._db.execute("COMMIT")

    def _where_in(self, columns: str, column: str, values: list) -> Iterator[tuple]:
        """The rows (those columns) whose `column` is one of the values, QUERY_KEYS at a time."""
        for i in range(0, len(values), QUERY_KEYS):
            part = values[i:i + QUERY_KEYS]
            yield from self._db.execute(
                f"SELECT {columns} FROM {self._table} WHERE {column} IN "
                f"({','.join('?' * len(part))}) ORDER BY 1", part)

    @property
    def held(self) -> int:
        return self._held[0]

    def close(self) -> None:
        self._closer()


class Spill(_ScratchDb):
    """(kind, value) -> placeholder and back, on disk. A row's id is its placeholder (number
    and kind), so rows go in in order (appended: ~2 us a row); values are found by an index on
    their hash (an integer) and compared."""

    def __init__(self, memory_values: int) -> None:
        # values as UTF-8 bytes with their lone surrogates kept (a text may hold them)
        super().__init__("placeholders", "id INTEGER PRIMARY KEY, h INTEGER, value BLOB", "h",
                         f"redaction's placeholders past the {memory_values:,} kept in memory")
        # one Bloom filter a spilled batch: a value seen for the first time (most of them, in
        # an address-dense log) is known new without asking the disk
        self._blooms: list[_Bloom] = []

    def put(self, items: Iterable[tuple[tuple[str, str], str]]) -> None:
        """Placeholders by (kind, value), none of them here yet (the Redactor looks here
        before it gives a new one)."""
        items, hashes = iter(items), []
        while part := list(islice(items, PUT_ROWS)):
            hashes.append(self._put(part))
        if hashes:  # one filter a spill (a spill moves MEMORY_VALUES values)
            self._blooms.append(_Bloom(np.concatenate(hashes)))

    def _put(self, items: list[tuple[tuple[str, str], str]]) -> np.ndarray:
        keys, shown = zip(*items)
        h = _hashes(list(keys))
        rows = sorted(zip(map(_id, shown), h.view(np.int64).tolist(),
                          (_raw(v) for _, v in keys)))
        self._insert(rows)
        return h

    def shown_many(self, keys: list[tuple[str, str]]) -> dict[tuple[str, str], str]:
        """The placeholders of those of the (kind, value) keys that are here."""
        out: dict[tuple[str, str], str] = {}
        if not keys:
            return out
        h = _hashes(keys)
        may = np.zeros(len(keys), bool)
        for bloom in self._blooms:
            may |= bloom.holds(h)
        wanted: dict[tuple[int, bytes], tuple[str, str]] = {
            (hv, _raw(k[1])): k for k, hv in zip(compress(keys, may.tolist()),
                                                 h[may].view(np.int64).tolist())}
        for row_id, hv, raw in self._where_in("id, h, value", "h",
                                              list(dict.fromkeys(hv for hv, _ in wanted))):
            key = wanted.get((hv, raw))
            if key is not None and _KINDS[row_id & 7] == key[0]:
                out[key] = f"⟨{key[0]}_{row_id >> 3}⟩"
        return out

    def value_of(self, shown: str) -> str | None:
        if _SHOWN.fullmatch(shown) is None:
            return None
        row = self._db.execute("SELECT value FROM placeholders WHERE id = ?",
                               (_id(shown),)).fetchone()
        return None if row is None else _text(row[0])


def _id(shown: str) -> int:
    """⟨IP_12⟩ -> 12 * 8 + the kind's index."""
    kind, n = _SHOWN.fullmatch(shown).groups()
    return int(n) << 3 | _KINDS.index(kind)


class _Bloom:
    """Whether a (kind, value) may be among a batch's: never wrong when it says no."""

    def __init__(self, h: np.ndarray):
        self._size = 1 << max(10, int(len(h) * BLOOM_BITS).bit_length())  # bits, a power of 2
        self._bits = np.zeros(self._size >> 3, np.uint8)
        for at in self._positions(h):
            np.bitwise_or.at(self._bits, at >> 3, (1 << (at & 7)).astype(np.uint8))

    def _positions(self, h: np.ndarray):
        """BLOOM_HASHES positions a value, from its hash's two halves (double hashing)."""
        lo, hi = h & 0xFFFFFFFF, (h >> 32) | 1
        mask = np.uint64(self._size - 1)
        for i in range(BLOOM_HASHES):
            yield (lo + np.uint64(i) * hi) & mask

    def holds(self, h: np.ndarray) -> np.ndarray:
        out = np.ones(len(h), bool)
        for at in self._positions(h):
            out &= ((self._bits[at >> 3] >> (at & 7).astype(np.uint8)) & 1).astype(bool)
        return out


def _hashes(keys: list[tuple[str, str]]) -> np.ndarray:
    """The keys' hashes (Python's, stable within the process the spill lives in)."""
    return np.fromiter(map(hash, keys), np.int64, len(keys)).view(np.uint64)


def _raw(value: str) -> bytes:
    return value.encode("utf-8", "surrogatepass")


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogatepass")


def _close(db: sqlite3.Connection, path: str, held: list[int]) -> None:
    """The file removed and its bytes given back (at close, when the Redactor goes, or at
    exit)."""
    db.close()
    spool_budget.give_back(held[0])
    held[0] = 0
    try:
        os.unlink(path)
    except OSError:
        pass


class SecretsOnDisk(_ScratchDb):
    """The secrets a run's recurrence index (rlm.redact.recurring.Known) no longer holds in
    memory, each with its rank (the order found) and its key (its last bytes, which the index
    looks up for a window of text its bitmap lets through)."""

    def __init__(self, memory_values: int) -> None:
        super().__init__("secrets", "rank INTEGER PRIMARY KEY, key INTEGER, value BLOB", "key",
                         f"redaction's known secrets past the {memory_values:,} kept in memory")

    def put(self, rows: Iterable[tuple[int, int, str]]) -> None:
        """(rank, key, value) of secrets not here yet."""
        rows = iter(rows)
        while part := [(r, k, _raw(v)) for r, k, v in islice(rows, PUT_ROWS)]:
            self._insert(part)

    def by_keys(self, keys: Iterable[int]) -> dict[int, list[tuple[str, int]]]:
        """key -> the (value, rank) of the secrets here that end with it."""
        out: dict[int, list[tuple[str, int]]] = {}
        for rank, key, raw in self._where_in("rank, key, value", "key", list(keys)):
            out.setdefault(key, []).append((_text(raw), rank))  # in rank order: ORDER BY 1
        return out
