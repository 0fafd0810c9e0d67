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

A chunk too big for the context is split before it is sent (rlm.engine.fit.read_fitting):
given `fits` and `split`, the batch holds its pieces' prompts, not the whole chunk's (which was
scanned and never sent, and then each piece scanned alone when sent: 15% of a LogHub fan-out's
redaction), and `fits` answers read_fitting from the verdicts found meanwhile. So `key` must
tell the pieces apart (a fan-out's: the chunk's id and its parts): one key, one prompt.
"""

from __future__ import annotations

from typing import Any, Callable, Generic, Hashable, Iterable, Iterator, TypeVar

I = TypeVar("I")
Messages = list[dict[str, str]]

BATCH_CHARS = 512_000  # prompt text scanned in one pass: past ~256 KB the fixed cost is gone
BATCH_ITEMS = 256


class Ahead(Generic[I]):
    def __init__(self, model: Any, build: Callable[[I], Messages], key: Callable[[I], Hashable],
                 fits: Callable[[I], bool] | None = None,
                 split: Callable[[I], list[I]] | None = None,
                 chars: int = BATCH_CHARS, items: int = BATCH_ITEMS):
        self._scan = getattr(model, "prescan", None)
        self._build, self._key = build, key
        self._fits, self._split = fits, split
        self._chars, self._items = chars, items
        # this batch's and the last one's (a worker may still read the pieces of an item of
        # the last batch when another worker's pull builds the next): prompts, fit verdicts
        self._built: list[dict[Hashable, Messages]] = [{}, {}]
        self._verdicts: list[dict[Hashable, bool]] = [{}, {}]

    def items(self, items: Iterable[I]) -> Iterator[I]:
        """The items in order; the prompts of each batch are built and scanned before its
        first item is given out."""
        if self._scan is None:
            yield from items
            return
        batch: list[I] = []
        built: dict[Hashable, Messages] = {}
        verdicts: dict[Hashable, bool] = {}
        size = 0
        for item in items:
            for leaf in self._leaves(item, verdicts):
                msgs = built[self._key(leaf)] = self._build(leaf)
                size += sum(len(m["content"]) for m in msgs if isinstance(m.get("content"), str))
            batch.append(item)
            if size >= self._chars or len(batch) >= self._items:
                yield from self._release(batch, built, verdicts)
                batch, built, verdicts, size = [], {}, {}, 0
        yield from self._release(batch, built, verdicts)

    def _leaves(self, item: I, verdicts: dict[Hashable, bool]) -> list[I]:
        """What is sent for the item: itself, or the pieces read_fitting splits it into when
        it does not fit (each verdict kept for `fits`)."""
        if self._fits is None or self._split is None:
            return [item]
        ok = verdicts[self._key(item)] = self._fits(item)
        pieces = [] if ok else self._split(item)
        return [leaf for p in pieces for leaf in self._leaves(p, verdicts)] or [item]

    def _release(self, batch: list[I], built: dict[Hashable, Messages],
                 verdicts: dict[Hashable, bool]) -> Iterator[I]:
        self._built = [built, self._built[0]]
        self._verdicts = [verdicts, self._verdicts[0]]
        if batch:
            self._scan([c for msgs in built.values() for m in msgs
                        if isinstance(c := m.get("content"), str)])
        yield from batch

    def fits(self, item: I) -> bool:
        """Whether the item fits the context: as found when its batch was built, else now."""
        key = self._key(item)
        for verdicts in self._verdicts:
            if key in verdicts:
                return verdicts.pop(key)
        return True if self._fits is None else self._fits(item)

    def messages(self, item: I) -> Messages:
        """The item's prompt: built ahead, or now (an item of a batch two back, or a piece of a
        chunk the server refused as too long)."""
        key = self._key(item)
        for built in self._built:
            if key in built:
                return built.pop(key)
        return self._build(item)
