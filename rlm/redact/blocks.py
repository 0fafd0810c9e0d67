"""Where in a text each of many words occurs, by blocks: one multi-pattern pass per block.

The text's bytes are cut into blocks of about 4 KB that end at line ends; one compiled set of
the words, case-blind (gitleaks' rule keywords, and '@' for e-mail addresses), says which of
them each block holds. A detector then reads only the blocks that hold its words: gitleaks
reads a rule over a whole file when its keyword is anywhere in it, and on a log 'auth' or 's.'
is somewhere in every file.

The engine is Hyperscan (Intel's multi-literal matcher, the `hyperscan` wheel) where it is
installed: 4.9 ms against the RE2 Set's 11.7-15.9 ms on the 16 LogHub logs (4.4 MB), same
blocks (tests/redact/test_redact_blocks.py). Elsewhere an RE2 Set: a Set whose DFA runs out of
memory returns nothing, as if no word were there; a pattern that matches every block (the
canary) tells the two apart, and a block where it is missing counts as holding every word.

Patterns can ride along (named regexes, case as written): gitleaks' rules whose keywords are
common words each give one that all their matches hold (rlm.redact.rules), so that they read
only the blocks where it is. A pattern's match may run past a line end into the next block
(a `\\s` in it): Hyperscan scans the patterns over the whole text at once (their matches are
few), the RE2 Set reads each block with OVERLAP bytes of the next.
"""

from __future__ import annotations

import threading
from bisect import bisect_right
from typing import Iterable

from rlm.redact.dense import re2_set, set_match

BLOCK = 4096  # bytes per block: smaller costs more Set calls, larger reads more text per rule
OVERLAP = 16  # bytes of the next block the RE2 Set reads with each, for the patterns: more
# than a match of one holds after a line end (an operator and the quotes or spaces before it;
# a token's terminator)


def cut_blocks(data: bytes, size: int = BLOCK, start: int = 0, end: int | None = None
               ) -> list[tuple[int, int]]:
    """data[start:end] cut into blocks of about `size` bytes that end at line ends."""
    out, a, n = [], start, len(data) if end is None else end
    while a < n:
        b = data.find(b"\n", min(a + size, n) - 1, n)
        b = n if b < 0 else b + 1
        out.append((a, b))
        a = b
    return out


class WordSet:
    """Words (bytes, matched case-blind) and named patterns (regexes, bytes) compiled once.
    engine: "hyperscan", "re2", or None for Hyperscan where it is installed. Patterns that
    Hyperscan cannot compile are left out (`patterns` then names none)."""

    def __init__(self, words: Iterable[bytes], engine: str | None = None,
                 patterns: Iterable[tuple[str, bytes]] = ()):
        self.words = list(dict.fromkeys(words))
        pats = dict(patterns)
        self._hs = None if engine == "re2" else _hyperscan_db(self.words, engine == "hyperscan")
        self._hs_patterns = None
        if self._hs is not None and pats:
            self._hs_patterns = _hyperscan_patterns(list(pats.values()), len(self.words))
            if self._hs_patterns is None:
                pats = {}  # a pattern Hyperscan cannot read: its readers read their words
        self.engine = "hyperscan" if self._hs is not None else "re2"
        self.patterns = list(pats)
        self.keys: list = [*self.words, *self.patterns]  # words (bytes), then pattern names
        self.index = {w: i for i, w in enumerate(self.keys)}
        self._local = threading.local()  # a Hyperscan scratch space is one thread's
        if self._hs is None:
            self._set, self.canary = _re2_set(self.words, pats)

    def knows(self, name: str) -> bool:
        return name in self.index

    def where(self, data: bytes, segments: list[tuple[int, int]] | None = None) -> "Presence":
        """Which blocks of data hold which words. segments: the byte ranges of texts joined
        into data (rlm.redact.batch); each is cut into blocks of its own, as if alone, and
        nothing between them is read."""
        if segments is None:
            blocks, texts = cut_blocks(data), None
        else:
            blocks, texts = [], []
            for s, e in segments:
                own = cut_blocks(data, BLOCK, s, e)
                texts.extend([(len(blocks), len(blocks) + len(own) - 1)] * len(own))
                blocks.extend(own)
        found = self._where_hs(data, blocks) if self._hs is not None else \
            self._where_re2(data, blocks, texts)
        return Presence(self, data, blocks, found, texts, segments)

    def _scratch(self, name: str, db):
        import hyperscan

        scratch = getattr(self._local, name, None)
        if scratch is None:
            scratch = hyperscan.Scratch(db)
            setattr(self._local, name, scratch)
        return scratch

    def _where_hs(self, data: bytes, blocks) -> dict[int, list[int]]:
        found: dict[int, list[int]] = {}

        def seen(key: int, _start: int, _end: int, _flags: int, block: int) -> None:
            found.setdefault(key, []).append(block)  # once a block: SINGLEMATCH

        scan, scratch, view = self._hs.scan, self._scratch("scratch", self._hs), memoryview(data)
        for bi, (a, b) in enumerate(blocks):
            scan(view[a:b], match_event_handler=seen, context=bi, scratch=scratch)
        if self._hs_patterns is not None:
            found.update(self._patterns_hs(data, blocks))
        return found

    def _patterns_hs(self, data: bytes, blocks) -> dict[int, list[int]]:
        """The patterns over the whole text in one scan (a match may cross a block's edge):
        each in the block where a match of it ends (its start is in that one or the one
        before: a reader reads one block either side)."""
        ends = [b for _, b in blocks]
        seen: dict[int, set[int]] = {}

        def report(key: int, _start: int, end: int, _flags: int, _ctx) -> None:
            seen.setdefault(key, set()).add(end - 1)

        def block(at: int) -> int:  # between joined texts (its terminator, a newline, read as
            # the end of the text alone): the block before
            i = bisect_right(ends, at)
            return i - 1 if i == len(blocks) or at < blocks[i][0] else i

        db = self._hs_patterns
        db.scan(data, match_event_handler=report, scratch=self._scratch("patterns", db))
        return {k: sorted(set(map(block, where))) for k, where in seen.items()}

    def _where_re2(self, data: bytes, blocks, texts: list[tuple[int, int]] | None
                   ) -> dict[int, list[int]]:
        """One Set call a block; with patterns, a block and OVERLAP bytes of the next (of the
        same text, when texts are joined)."""
        every = range(len(self.keys))  # a block where the DFA gave up holds them all
        found: dict[int, list[int]] = {}
        reach = OVERLAP if self.patterns else 0
        for bi, (a, b) in enumerate(blocks):
            n = len(data) if texts is None else blocks[texts[bi][1]][1]
            for k in set_match(self._set, self.canary, data[a:min(n, b + reach)], every):
                found.setdefault(k, []).append(bi)
        return found


def _hyperscan_db(words: list[bytes], required: bool):
    """The words as one Hyperscan literal database (ids their indexes, each reported once a
    scan, case-blind), or None where the package is missing or cannot compile them (unless
    `required`)."""
    try:
        import hyperscan

        db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        db.compile(expressions=words, ids=list(range(len(words))), elements=len(words),
                   flags=hyperscan.HS_FLAG_CASELESS | hyperscan.HS_FLAG_SINGLEMATCH,
                   literal=True)
        return db
    except Exception:  # noqa: BLE001 - ImportError, or a build of it without literal mode
        if required:
            raise
        return None


def _hyperscan_patterns(patterns: list[bytes], first_id: int):
    """The patterns as a Hyperscan database (ids from first_id), or None if it cannot
    compile them."""
    try:
        import hyperscan

        db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        db.compile(expressions=patterns, elements=len(patterns),
                   ids=list(range(first_id, first_id + len(patterns))), flags=0)
        return db
    except Exception:  # noqa: BLE001 - a construct Hyperscan lacks
        return None


def _re2_set(words: list[bytes], patterns: dict[str, bytes]):
    import re2

    # case-blind words in the Set: faster than lower-casing the text first
    return re2_set([*(b"(?i)" + re2.escape(w) for w in words), *patterns.values()],
                   max_mem=64 << 20)


class Presence:
    """Which blocks of one text (or of texts joined, each cut on its own) hold which words."""

    def __init__(self, words: WordSet, data: bytes, blocks, found,
                 texts: list[tuple[int, int]] | None = None,
                 segments: list[tuple[int, int]] | None = None):
        self.words, self.data, self.blocks = words, data, blocks
        self._found = found
        self._texts = texts  # joined texts: per block, its text's first and last block
        self.segments = segments  # joined texts: their byte ranges in data

    def text_at(self, at: int) -> tuple[int, int]:
        """The byte range of the text that offset `at` is in: the whole data, or one of the
        joined texts."""
        if self.segments is None:
            return 0, len(self.data)
        return self.segments[bisect_right(self.segments, (at, len(self.data))) - 1]

    def present(self) -> set:
        """The words (and pattern names) found in any block."""
        return {self.words.keys[k] for k in self._found}

    def blocks_of(self, words: Iterable) -> list[int]:
        out: set[int] = set()
        for w in words:
            out.update(self._found.get(self.words.index[w], ()))
        return sorted(out)

    def windows(self, words: Iterable, margin: int = 1) -> list[tuple[int, int]]:
        """Byte ranges of the blocks that hold any of the words, with `margin` blocks either
        side (a match may run into the next block), merged; never across joined texts."""
        out: list[tuple[int, int]] = []
        whole = (0, len(self.blocks) - 1)
        for i in self.blocks_of(words):
            lo, hi = whole if self._texts is None else self._texts[i]
            a, b = self.blocks[max(lo, i - margin)][0], self.blocks[min(hi, i + margin)][1]
            if out and a <= out[-1][1]:  # joined texts: never (a gap lies between them)
                out[-1] = (out[-1][0], max(b, out[-1][1]))
            else:
                out.append((a, b))
        return out
