"""A chunk always fits the model's context, or is split and read in pieces: never dropped.

Chunks are cut by bytes from a ratio measured on a sample of the corpus, which can be far off
for the text of one chunk (a file of emoji codes next to plain code). So before a chunk is
sent, its own text is estimated again: with the model's tokenizer where it runs locally, else
with a ratio taken from that text itself (non-ASCII characters cost a byte-level tokenizer
about one token per extra UTF-8 byte). A chunk over the window is split in two, on a line
boundary when it has several lines, else by bytes on a character boundary. A chunk that the
server still refuses as too long for its context (ContextTooLong) is split the same way.
"""

from __future__ import annotations

from typing import Awaitable, Callable, TypeVar

from rlm.corpus.chunk import Chunk, Part
from rlm.errors import ContextTooLong
from rlm.models.profile import profile_of

R = TypeVar("R")
MIN_PIECE_BYTES = 64  # below this a piece is not split further: its failure is reported


def text_tokens(text: str) -> int:
    """Tokens of `text` for a byte-level BPE tokenizer, erring high: ASCII ~4 characters a
    token, digits ~2 a token (many tokenizers split numbers), a non-ASCII character one token
    per UTF-8 byte past its first (an emoji ~3, a CJK character ~2, an accent 1)."""
    extra = len(text.encode("utf-8", "replace")) - len(text)  # past the first byte of a char
    digits = sum(text.count(d) for d in "0123456789")
    plain = len(text) - digits - (extra and sum(1 for ch in text if ord(ch) >= 128))
    return int(plain / 4 + digits / 2 + extra) + 1


def estimate(model, text: str) -> int:
    """The model's own count where it is exact (local), else the higher of its ratio and ours."""
    if profile_of(model).tier == "local":
        return model.count_tokens(text)
    return max(model.count_tokens(text), text_tokens(text))


def split(c: Chunk) -> list[Chunk]:
    """Two halves of `c` (same id): by lines when it has several, else by bytes."""
    src = c.source
    p = c.parts[0]

    def half(start: int, end: int, piece: tuple[int, int] | None = None) -> Chunk:
        return Chunk(c.id, (Part(p.path, start, end, piece),), src, c.module, c.how)

    if p.end > p.start and p.piece is None:
        mid = (p.start + p.end) // 2
        return [half(p.start, mid), half(mid + 1, p.end)]
    if c.nbytes < 2 * MIN_PIECE_BYTES:
        return []
    a, b = src.part_bytes(p)
    q = a + (b - a) // 2
    while q > a and (src.data[q] & 0xC0) == 0x80:  # not inside a UTF-8 sequence
        q -= 1
    return [half(p.start, p.end, (a, q)), half(p.start, p.end, (q, b))]


async def read_fitting(c: Chunk, read: Callable[[Chunk], Awaitable[R]],
                       fits: Callable[[Chunk], bool],
                       on_split: Callable[[Chunk], None] | None = None) -> list[R]:
    """read(c), or read(piece) for each piece of c when c does not fit (by the estimate, or
    by the server's answer). Results in file order."""
    pieces = [] if fits(c) else split(c)
    if not pieces:
        try:
            return [await read(c)]
        except ContextTooLong:
            pieces = split(c)
            if not pieces:
                raise
    if on_split:
        on_split(c)
    out: list[R] = []
    for p in pieces:
        out.extend(await read_fitting(p, read, fits, on_split))
    return out
