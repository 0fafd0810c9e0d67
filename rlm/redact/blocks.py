"""Where in a text each of many words occurs, by blocks: one pass of an RE2 Set per block.

The text's bytes are cut into blocks of about 4 KB that end at line ends; an RE2 Set of the
words (case-blind) (gitleaks' rule keywords, and the words the rare detectors need: '://',
'bearer', 'password', '@', ...) says which of them each block holds. A detector then reads only
the blocks (or the lines) that hold its words: gitleaks reads a rule over a whole file when its
keyword is anywhere in it, and on a log 'auth' or 's.' is somewhere in every file.

A Set whose DFA runs out of memory returns nothing, as if no word were there; a pattern that
matches every block (the canary) tells the two apart, and a block where it is missing counts as
holding every word.
"""

from __future__ import annotations

from typing import Iterable

BLOCK = 4096  # bytes per block: smaller costs more Set calls, larger reads more text per rule


def cut_blocks(data: bytes, size: int = BLOCK) -> list[tuple[int, int]]:
    """data cut into blocks of about `size` bytes that end at line ends."""
    out, a, n = [], 0, len(data)
    while a < n:
        b = data.find(b"\n", min(a + size, n) - 1)
        b = n if b < 0 else b + 1
        out.append((a, b))
        a = b
    return out


class WordSet:
    """Lower-case words (bytes) compiled once into an RE2 Set."""

    def __init__(self, words: Iterable[bytes]):
        import re2

        self.words = list(dict.fromkeys(words))
        o = re2.Options()
        o.log_errors = False
        o.max_mem = 64 << 20
        o.encoding = re2.Options.Encoding.LATIN1
        s = re2.Set.SearchSet(o)
        for w in self.words:  # case-blind in the Set: faster than lower-casing the text first
            s.Add(b"(?i)" + re2.escape(w))
        self.canary = s.Add(b"^")
        s.Compile()
        self._set = s._set
        self.index = {w: i for i, w in enumerate(self.words)}

    def where(self, data: bytes) -> "Presence":
        blocks = cut_blocks(data)
        every = range(len(self.words))
        found: dict[int, list[int]] = {}
        match = self._set.Match
        for bi, (a, b) in enumerate(blocks):
            got = match(data[a:b])
            if self.canary not in got:  # the DFA gave up: count the block as holding them all
                got = every
            for k in got:
                if k != self.canary:
                    found.setdefault(k, []).append(bi)
        return Presence(self, data, blocks, found)


class Presence:
    """Which blocks of one text hold which words."""

    def __init__(self, words: WordSet, data: bytes, blocks, found):
        self.words, self.data, self.blocks = words, data, blocks
        self._found = found

    def present(self) -> set[bytes]:
        """The words found in any block."""
        return {self.words.words[k] for k in self._found}

    def blocks_of(self, words: Iterable[bytes]) -> list[int]:
        out: set[int] = set()
        for w in words:
            out.update(self._found.get(self.words.index[w], ()))
        return sorted(out)

    def windows(self, words: Iterable[bytes], margin: int = 1) -> list[tuple[int, int]]:
        """Byte ranges of the blocks that hold any of the words, with `margin` blocks either
        side (a match may run into the next block), merged."""
        out: list[tuple[int, int]] = []
        last = len(self.blocks) - 1
        for i in self.blocks_of(words):
            a, b = self.blocks[max(0, i - margin)][0], self.blocks[min(last, i + margin)][1]
            if out and a <= out[-1][1]:
                out[-1] = (out[-1][0], max(b, out[-1][1]))
            else:
                out.append((a, b))
        return out
