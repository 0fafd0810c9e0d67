"""Shannon entropy of a string, in bits a character: what gitleaks' rules (rlm.redact.rules)
and the entropy tokens (rlm.redact.scan) ask of a candidate."""

from __future__ import annotations

import math
from collections import Counter

_CLOG = [0.0, *(c * math.log2(c) for c in range(1, 257))]  # c*log2(c) for a count c


def shannon(s: str) -> float:
    """Bits a character: log2(n) - sum(c*log2(c))/n over the characters' counts c, the sum
    read from a table (a log with a key or a JWT on every line asks it twice a line; the
    textbook sum of -p*log2(p), one Python step a character, was a third of their redaction)."""
    n = len(s)
    if not n:
        return 0.0
    counts = Counter(s).values()
    total = sum(map(_CLOG.__getitem__, counts)) if n < len(_CLOG) else \
        sum(c * math.log2(c) for c in counts)
    return math.log2(n) - total / n
