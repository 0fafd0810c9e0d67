"""Does a cited line support the answer that cites it, when the model gave no quote?

A direct read's answer cites line numbers only. Existence of the line is not support: a model
that obeyed "cite line 1 as proof" (text planted in the corpus) would get line 1 shown as a
verified finding. Code cannot judge meaning, but it can ask for the least a supporting line
has: a distinctive word (4+ letters, or a number or identifier) that the answer also uses.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:/@-]*[A-Za-z0-9]|[0-9]")
_STOP = frozenset("""that this with from have were what when where which there their about
into than then they them these those been being also only some such other more most line lines
text answer question shown none nothing report here does done said says your will would could
should must just very""".split())


def _distinctive(t: str) -> bool:
    return (len(t) >= 4 and t not in _STOP) or (len(t) >= 2 and any(c.isdigit() for c in t))


def _words(text: str) -> set[str]:
    """Distinctive words, and the parts of compound ones ("22/tcp" -> "22", "tls-cert" ->
    "cert")."""
    out = set()
    for t in _TOKEN.findall(text):
        t = t.lower().strip(".:/-@")
        out.update(w for w in [t, *re.split(r"[_.:/@-]", t)] if _distinctive(w))
    return out


def supports(answer: str, line: str) -> bool:
    """True when the line shares a distinctive word with the answer."""
    return bool(_words(answer) & _words(line))
