"""A fan-out's prompts, built a batch ahead of the calls that send them.

Redaction's pattern scan costs about 100 us a call on top of its cost per byte: on prompts of
4-16 KB, that fixed cost is as much as the scan. A fan-out knows its next prompts, so `Ahead`
builds a batch of them (about BATCH_CHARS) as the workers pull items, and hands their texts to
the model's `prescan` (rlm.redact.model.RedactingModel) to be scanned in one pass
(rlm.redact.batch). Each prompt is then sent as it would have been: the same text, redacted
with the same placeholders, given in the order sent. A model without `prescan` (redaction
off) gets its items as they come, and prompts are built when sent.

Memory stays flat: one batch of prompts is held at a time. A worker takes its prompt as soon
as it takes its item (nothing awaits between the two), so a new batch replaces the last.

A prompt built ahead is given only to the very item it was built for: the pieces of a chunk too
big for the context share the chunk's id (rlm.engine.fit.split), and each must get its own.
"""

from __future__ import annotations

from typing import Any, Callable, Generic, Iterable, Iterator, TypeVar

I = TypeVar("I")
Messages = list[dict[str, str]]

BATCH_CHARS = 512_000  # prompt text scanned in one pass: past ~256 KB the fixed cost is gone
BATCH_ITEMS = 256


class Ahead(Generic[I]):
    def __init__(self, model: Any, build: Callable[[I], Messages], key: Callable[[I], str],
                 chars: int = BATCH_CHARS, items: int = BATCH_ITEMS):
        self._scan = getattr(model, "prescan", None)
        self._build, self._key = build, key
        self._chars, self._items = chars, items
        self._built: dict[str, tuple[I, Messages]] = {}

    def items(self, items: Iterable[I]) -> Iterator[I]:
        """The items in order; the prompts of each batch are built and scanned before its
        first item is given out."""
        if self._scan is None:
            yield from items
            return
        batch: list[I] = []
        built: dict[str, tuple[I, Messages]] = {}
        size = 0
        for item in items:
            msgs = self._build(item)
            built[self._key(item)] = (item, msgs)
            batch.append(item)
            size += sum(len(m["content"]) for m in msgs if isinstance(m.get("content"), str))
            if size >= self._chars or len(batch) >= self._items:
                yield from self._release(batch, built)
                batch, built, size = [], {}, 0
        yield from self._release(batch, built)

    def _release(self, batch: list[I], built: dict[str, tuple[I, Messages]]) -> Iterator[I]:
        self._built = built
        if batch:
            self._scan([c for _, msgs in built.values() for m in msgs
                        if isinstance(c := m.get("content"), str)])
        yield from batch

    def messages(self, item: I) -> Messages:
        """The item's prompt: built ahead for this very item, or now (a piece of a chunk split
        to fit, which shares the chunk's key)."""
        key = self._key(item)
        ahead = self._built.get(key)
        if ahead is not None and ahead[0] is item:
            del self._built[key]
            return ahead[1]
        return self._build(item)
