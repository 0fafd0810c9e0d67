"""The placeholders of one run: what rlm.redact.detect finds becomes ``⟨SECRET_1⟩``, ``⟨EMAIL_3⟩``.

One ``Redactor`` lives for one run: the same value gets the same placeholder in every call, so a
model can still correlate ("⟨EMAIL_3⟩ failed to log in twice"), and ``restore`` maps a model's
reply back to the original values for local use.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from itertools import chain, compress, repeat, zip_longest
from operator import is_, itemgetter

from rlm.redact.detect import KIND_WORDS, KINDS, PLACEHOLDER, Hit, collection_paused, detect
from rlm.redact.recurring import Known
from rlm.redact.spill import Spill

RECENT = 16  # texts remembered
RECENT_CHARS = 65_536  # the longest text remembered (16 of them: 1 MB at most)
MEMORY_VALUES = 200_000  # placeholders held in memory (~320 bytes each: ~65 MB); past it they
# move to temporary disk (rlm.redact.spill)


class Redactor:
    """Placeholders of one run, counts per kind, and the way back for local display."""

    def __init__(self, memory_values: int | None = None) -> None:
        self._memory_values = MEMORY_VALUES if memory_values is None else memory_values
        self._spill: Spill | None = None  # what memory no longer holds
        self._by_value: dict[tuple[str, str], str] = {}
        self._by_placeholder: dict[str, str] = {}
        self._counters = {k: 0 for k in KINDS}
        self._touched: set[int] = set()  # hashes of the prompts (first user message) with a hit
        self._known = Known()  # SECRET values so far: masked wherever they recur
        self._lock = threading.Lock()
        # the last texts redacted and what they became: every prompt repeats the same system
        # text, and a retry its whole prompt (exact while no new secret was learnt since)
        self._recent: OrderedDict[tuple[str, int], tuple[str, bool]] = OrderedDict()

    def placeholder(self, kind: str, value: str) -> str:
        key = (kind, value)  # exact: restore() must give back the very text, for quote checks
        with self._lock:
            ph = self._by_value.get(key)
            if ph is None and self._spill is not None:
                ph = self._spill.shown_many([key]).get(key)
            if ph is None:
                self._counters[kind] += 1
                ph = f"⟨{kind}_{self._counters[kind]}⟩"
                self._by_value[key] = ph
                self._by_placeholder[ph] = value
                if kind == "SECRET":
                    self._known.add((value,))
                self._bound_memory()
            return ph

    def _bound_memory(self) -> None:
        """Past memory_values placeholders in memory, all of them move to disk (the lock held)."""
        if len(self._by_value) > self._memory_values:
            if self._spill is None:
                self._spill = Spill(self._memory_values)
            self._spill.put(self._by_value.items())
            self._by_value.clear()
            self._by_placeholder.clear()

    def _new_placeholders(self, keys: list[tuple[str, str]], shown: list) -> None:
        """Fill the gaps of `shown` (placeholders of `keys`) with new placeholders numbered in
        text order, as `placeholder` would, made and stored in C (map, zip, dict.update; the
        lock held): an sshd log has thousands of new addresses a prompt."""
        missing = list(dict.fromkeys(compress(keys, map(is_, shown, repeat(None)))))
        spilled = self._spill.shown_many(missing) if self._spill is not None else {}
        if spilled:  # given before, moved to disk since: the rest are new, in text order
            missing = [k for k in missing if k not in spilled]
        kinds = dict.fromkeys(map(itemgetter(0), missing))
        for kind in kinds:
            new = missing if len(kinds) == 1 else [k for k in missing if k[0] == kind]
            first = self._counters[kind] + 1
            self._counters[kind] += len(new)
            names = list(map(f"⟨{kind}_{{}}⟩".format, range(first, first + len(new))))
            self._by_value.update(zip(new, names))
            self._by_placeholder.update(zip(names, map(itemgetter(1), new)))
            if kind == "SECRET":
                self._known.add(map(itemgetter(1), new))
        if spilled:
            shown[:] = [self._by_value.get(k) or spilled[k] for k in keys]
        else:
            shown[:] = map(self._by_value.__getitem__, keys)
        self._bound_memory()

    def redact(self, text: str, count_prompt: bool = False,
               found: list[Hit] | None = None) -> str:
        """text with every detected value replaced by its placeholder (`found`: the text's
        `pattern_hits`, when a worker computed them)."""
        if not text:
            return text
        key = (text, len(self._known))
        done = self._recent.get(key) if len(text) <= RECENT_CHARS else None
        if done is not None:
            if count_prompt and done[1]:
                with self._lock:
                    self._touched.add(hash(text))
            return done[0]
        out = self._redact(text, count_prompt, found)
        if len(text) <= RECENT_CHARS:
            with self._lock:
                self._recent[key] = (out, out is not text)
                while len(self._recent) > RECENT:
                    self._recent.popitem(last=False)
        return out

    def _redact(self, text: str, count_prompt: bool, found: list[Hit] | None) -> str:
        with collection_paused():  # the placeholders' keys are tuples too
            return self._replaced(text, count_prompt, found)

    def _replaced(self, text: str, count_prompt: bool, found: list[Hit] | None) -> str:
        hits = detect(text, self._known, found)
        if not hits:
            return text
        starts, ends, kinds, values = zip(*hits)
        keys = list(zip(kinds, values))
        with self._lock:  # placeholders known already: one dict look-up each, in C
            shown = list(map(self._by_value.get, keys))
            if None in shown:
                self._new_placeholders(keys, shown)
        # the text between hits, then its placeholder, in turn (a private key's body lines all
        # show the one placeholder of the key)
        gaps = map(text.__getitem__, map(slice, (0, *ends), (*starts, len(text))))
        out = "".join(chain.from_iterable(zip_longest(gaps, shown, fillvalue="")))
        if count_prompt:
            with self._lock:
                self._touched.add(hash(text))
        return out

    def restore(self, text: str) -> str:
        """A model's reply with the placeholders it repeated mapped back to the originals."""
        if not text or "⟨" not in text:
            return text
        return PLACEHOLDER.sub(lambda m: self._value_of(m.group(0)), text)

    def _value_of(self, shown: str) -> str:
        value = self._by_placeholder.get(shown)
        if value is None and self._spill is not None:
            with self._lock:
                value = self._spill.value_of(shown)
        return shown if value is None else value

    def restore_data(self, data):
        return _each_string(data, self.restore)

    def mask_data(self, data):
        """Every string in a JSON-like structure redacted (for --redact-report)."""
        return _each_string(data, self.redact)

    # -- counts
    def counts(self) -> dict[str, int]:
        with self._lock:
            return {k: n for k, n in self._counters.items() if n}

    @property
    def values(self) -> int:
        return sum(self.counts().values())

    @property
    def prompts(self) -> int:
        return len(self._touched)

    def statement(self) -> str:
        """e.g. '37 values in 12 prompts were redacted before leaving this machine (secrets 21,
        e-mails 16)'; empty when nothing was found. Prompts, not chunks: a value can also be in
        a merge or synthesis prompt, and a retry of the same prompt counts once."""
        c = self.counts()
        if not c:
            return ""
        n, k = self.values, self.prompts
        kinds = ", ".join(f"{KIND_WORDS[x]} {c[x]}" for x in KINDS if x in c)
        return (f"{n} value{'s' if n != 1 else ''} in {k} prompt{'s' if k != 1 else ''} "
                f"{'were' if n != 1 else 'was'} redacted before leaving this machine ({kinds})")


def _each_string(data, fn):
    """data (JSON-like) with fn applied to every string in it."""
    if isinstance(data, str):
        return fn(data)
    if isinstance(data, list):
        return [_each_string(x, fn) for x in data]
    if isinstance(data, dict):
        return {k: _each_string(v, fn) for k, v in data.items()}
    return data
