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

RECENT = 16  # texts remembered
RECENT_CHARS = 65_536  # the longest text remembered (16 of them: 1 MB at most)


class Redactor:
    """Placeholders of one run, counts per kind, and the way back for local display."""

    def __init__(self) -> None:
        self._by_value: dict[tuple[str, str], str] = {}
        self._by_placeholder: dict[str, str] = {}
        self._counters = {k: 0 for k in KINDS}  # placeholders given, by kind (their numbers)
        self._counted = {k: 0 for k in KINDS}  # of those, the ones that left (counts())
        self._held: dict[str, str] = {}  # placeholder -> kind: given to a prompt redacted
        # ahead (prepare) that has not been sent yet, counted when a prompt showing it is
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
            if ph is None:
                self._counters[kind] += 1
                self._counted[kind] += 1
                ph = f"⟨{kind}_{self._counters[kind]}⟩"
                self._by_value[key] = ph
                self._by_placeholder[ph] = value
                if kind == "SECRET":
                    self._known.add((value,))
            return ph

    def _new_placeholders(self, keys: list[tuple[str, str]], shown: list,
                          hold: bool = False) -> None:
        """Fill the gaps of `shown` (placeholders of `keys`) with new placeholders numbered in
        text order, as `placeholder` would, made and stored in C (map, zip, dict.update; the
        lock held): an sshd log has thousands of new addresses a prompt. hold: for a prompt
        redacted ahead, not counted until it is sent (see sent)."""
        missing = list(dict.fromkeys(compress(keys, map(is_, shown, repeat(None)))))
        kinds = dict.fromkeys(map(itemgetter(0), missing))
        for kind in kinds:
            new = missing if len(kinds) == 1 else [k for k in missing if k[0] == kind]
            first = self._counters[kind] + 1
            self._counters[kind] += len(new)
            names = list(map(f"⟨{kind}_{{}}⟩".format, range(first, first + len(new))))
            if hold:
                self._held.update(zip(names, repeat(kind)))
            else:
                self._counted[kind] += len(new)
            self._by_value.update(zip(new, names))
            self._by_placeholder.update(zip(names, map(itemgetter(1), new)))
            if kind == "SECRET":
                self._known.add(map(itemgetter(1), new))
        shown[:] = map(self._by_value.__getitem__, keys)

    def _count_held(self, shown) -> None:
        """The held placeholders among `shown` leave now: counted (the lock held)."""
        for ph in self._held.keys() & set(shown):
            self._counted[self._held.pop(ph)] += 1

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

    def prepare(self, text: str, found: list[Hit]) -> tuple[str, tuple[str, ...]]:
        """text redacted ahead of sending it (a fan-out's next prompts, in the order they will
        be sent: rlm.redact.model.RedactingModel.prescan), from its pattern hits, and the
        placeholders it shows. Its new placeholders are given now, and counted when a prompt
        that shows them is sent (`sent`): a run that stops before sending it counts none."""
        if not text:
            return text, ()
        with collection_paused():
            shown: list = []
            return self._replaced(text, False, found, hold=True, shown=shown), tuple(shown)

    def sent(self, text: str, out: str, shown: tuple[str, ...], count_prompt: bool) -> None:
        """A prompt redacted ahead (`prepare`) is being sent: its placeholders are counted,
        and the prompt with them (count_prompt), as `redact` counts them."""
        with self._lock:
            if self._held and shown:
                self._count_held(shown)
            if count_prompt and out is not text:
                self._touched.add(hash(text))

    def _redact(self, text: str, count_prompt: bool, found: list[Hit] | None) -> str:
        with collection_paused():  # the placeholders' keys are tuples too
            return self._replaced(text, count_prompt, found)

    def _replaced(self, text: str, count_prompt: bool, found: list[Hit] | None,
                  hold: bool = False, shown: list | None = None) -> str:
        hits = detect(text, self._known, found)
        if not hits:
            return text
        starts, ends, kinds, values = zip(*hits)
        keys = list(zip(kinds, values))
        shown = [] if shown is None else shown
        with self._lock:  # placeholders known already: one dict look-up each, in C
            shown[:] = map(self._by_value.get, keys)
            if None in shown:
                self._new_placeholders(keys, shown, hold)
            if self._held and not hold:  # held by a prompt not sent yet, leaving in this one
                self._count_held(shown)
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
        return PLACEHOLDER.sub(lambda m: self._by_placeholder.get(m.group(0), m.group(0)), text)

    def restore_data(self, data):
        return _each_string(data, self.restore)

    def mask_data(self, data):
        """Every string in a JSON-like structure redacted (for --redact-report)."""
        return _each_string(data, self.redact)

    # -- counts
    def counts(self) -> dict[str, int]:
        """Values replaced, by kind: those given to a prompt redacted ahead and not sent are
        not among them."""
        with self._lock:
            return {k: n for k, n in self._counted.items() if n}

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
