"""Many prompts' pattern scans in one pass: what a fan-out sends, scanned ahead in batches.

`pattern_hits` costs a fixed ~100 us a call (about eight engine calls, each with Python around
it) on top of its ~15-25 ns a byte: on 4 KB prompts, more than the scan itself. A fan-out knows
its next prompts, so it hands them here a batch at a time (rlm.redact.model.RedactingModel.
prescan): the texts are joined with SEP between them and scanned once, and each text gets
exactly the hits `pattern_hits` gives it alone:

- what reads a text by lines (the shapes, IPv4/IPv6, e-mail addresses, cards, entropy tokens)
  sees SEP's newlines where the text alone has its start or end: the same look-arounds;
- what reads it by 4 KB blocks (gitleaks' keywords) cuts each text into blocks of its own,
  and the rules then read each text's own bytes, so `^`, `$` and `\\b` at its edges, and which
  blocks a keyword's window holds, are the text's alone (rlm.redact.blocks, rlm.redact.rules);
- a pattern that could run on past a newline (`\\s*`, a key=value's value) stops at SEP's NUL,
  or takes it into its hit: a hit that reaches into SEP sends the texts on both sides to be
  scanned alone again;
- texts that hold a NUL or a private-key block (matched over the whole text, across lines)
  are scanned alone.

Placeholders are not given here: the run's Redactor gives them when each prompt is sent, in
the order sent, from these hits (rlm.redact.redactor.Redactor.redact's `found`).
"""

from __future__ import annotations

from itertools import repeat
from operator import itemgetter

import numpy as np

from rlm.redact.detect import Hit, _byte_hits, _to_chars, collection_paused, pattern_hits
from rlm.redact.scan import Encoded

SEP = "\n\x00\n"


def alone(text: str) -> bool:
    """The text is scanned on its own (see the module docstring)."""
    return "\x00" in text or "PRIVATE KEY" in text


def pattern_hits_many(texts: list[str]) -> list[list[Hit]]:
    """[pattern_hits(t) for t in texts], in one pass over the texts that can be joined."""
    out: list[list[Hit] | None] = [None] * len(texts)
    joined = [i for i, t in enumerate(texts) if t and not alone(t)]
    if len(joined) > 1:
        with collection_paused():
            for i, hits in zip(joined, _joined_hits([texts[i] for i in joined])):
                out[i] = hits
    return [pattern_hits(t) if hits is None else hits for t, hits in zip(texts, out)]


def _joined_hits(texts: list[str]) -> list[list[Hit] | None]:
    """Each text's hits from one scan of them joined; None for a text a hit ran into SEP from
    (or out of): it is scanned alone. The hits are sorted out to their texts with arrays and
    made in C (a batch of LogHub holds ~1,000 of them: a Python loop took 10% of the scan)."""
    enc = Encoded(SEP.join(texts))
    lengths = np.fromiter(map(len, texts), np.int64, len(texts))
    starts = np.concatenate(([0], np.cumsum(lengths + len(SEP))[:-1]))  # in characters
    sizes = lengths if enc.ascii else np.fromiter(
        (len(t.encode("utf-8", "surrogatepass")) for t in texts), np.int64, len(texts))
    at = np.concatenate(([0], np.cumsum(sizes + len(SEP))[:-1]))  # in bytes
    found = _byte_hits(enc.data, list(zip(at.tolist(), (at + sizes).tolist())))
    out: list[list[Hit] | None] = [[] for _ in texts]
    if not found:
        return out
    if enc.ascii:  # characters are bytes: the values sliced in C
        hs, he, kinds = zip(*found)
        values = list(map(enc.text.__getitem__, map(slice, hs, he)))
    else:
        hs, he, kinds, values = zip(*_to_chars(enc, found))
    hs, he = np.array(hs, np.int64), np.array(he, np.int64)
    k = np.searchsorted(starts, hs, side="right") - 1
    shift = starts[k]
    across = np.flatnonzero(he > shift + lengths[k])
    order = np.argsort(k, kind="stable").tolist()  # each text's hits in the order found
    pick = itemgetter(*order) if len(order) > 1 else lambda seq: (seq[order[0]],)
    made = list(map(tuple.__new__, repeat(Hit), zip(
        pick((hs - shift).tolist()), pick((he - shift).tolist()), pick(kinds), pick(values))))
    bounds = np.searchsorted(k[order], np.arange(len(texts) + 1)).tolist()
    out = [made[bounds[i]:bounds[i + 1]] for i in range(len(texts))]
    for i in across.tolist():  # into SEP, or across it: the texts it touches are read alone
        for j in range(k[i], min(len(texts), int(np.searchsorted(starts, he[i] + len(SEP),
                                                                  side="right")))):
            out[j] = None
    return out
