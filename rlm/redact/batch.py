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

from bisect import bisect_right

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
    (or out of): it is scanned alone."""
    enc = Encoded(SEP.join(texts))
    starts, segments, char, at = [], [], 0, 0
    sizes = map(len, texts) if enc.ascii else (len(t.encode("utf-8", "surrogatepass"))
                                               for t in texts)
    for t, size in zip(texts, sizes):
        starts.append(char)
        segments.append((at, at + size))
        char += len(t) + len(SEP)
        at += size + len(SEP)
    hits: list[list[Hit] | None] = [[] for _ in texts]
    for h in _to_chars(enc, _byte_hits(enc.data, segments)):
        k = bisect_right(starts, h.start) - 1
        a = starts[k]
        if h.end <= a + len(texts[k]):
            if hits[k] is not None:
                hits[k].append(Hit(h.start - a, h.end - a, h.kind, h.value))
            continue
        # into SEP, or across it: the texts it touches are read alone
        for j in range(k, min(len(texts), bisect_right(starts, h.end + len(SEP)))):
            hits[j] = None
    return hits
