"""Log profile: mask variable tokens, count templates, pick rare templates and error-level lines.

Code does the detection here: on a line-oriented log the interesting lines are those whose
shape is rare (a template seen a handful of times among hundreds of thousands) or whose level
says so. Masking runs as one C-level `re.sub` per 4 MiB block; newlines are never touched, so
the masked block splits into exactly the same lines as the original.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rlm.corpus.source import TextSource
from rlm.interrupt import checkpoint

# Any token that contains a digit (timestamps, ids, counts, IPs, versions) or a long hex run.
_MASK = re.compile(rb"[A-Za-z0-9_.:+-]*[0-9][A-Za-z0-9_.:+-]*|\b[0-9a-fA-F]{8,}\b")
_ERROR_LEVEL = re.compile(rb"\b(ERROR|ERR|FATAL|CRITICAL|CRIT|PANIC|EMERG|ALERT|SEVERE)\b|\bpanic:")
BLOCK = 1 << 22


@dataclass
class Template:
    text: str
    count: int
    lines: list[int]  # up to `keep` line numbers (1-based, ascending)
    error_level: bool


@dataclass
class Profile:
    lines: int
    bytes: int
    templates_total: int
    templates: list[Template]  # rare and error-level templates, the candidates' shapes
    candidates: list[int] = field(default_factory=list)  # candidate line numbers, ascending
    common: list[Template] = field(default_factory=list)  # the most frequent shapes, for context
    overflow: bool = False  # too many distinct templates: tracking was capped (declared)
    rare_max: int = 0


def profile_log(src: TextSource, rare_max: int | None = None, keep: int = 20,
                max_templates: int = 200_000, max_candidates: int = 400) -> Profile:
    """One pass over the file. A template is rare when seen at most `rare_max` times
    (default: 1 on small logs rising to 5 at 100,000 lines, then 0.001% of the lines)."""
    data = src.data
    size = src.size
    counts: dict[bytes, list] = {}
    line_no = 0
    overflow = False
    pos = 0
    while pos < size:
        checkpoint(pos, size)  # Ctrl-C stops the scan here; progress in bytes
        end = min(size, pos + BLOCK)
        if end < size:
            nl = data.rfind(b"\n", pos, end)
            end = nl + 1 if nl >= pos else data.find(b"\n", end) + 1 or size
        block = bytes(data[pos:end])
        pos = end
        masked = _MASK.sub(b"#", block)
        if masked.endswith(b"\n"):
            masked = masked[:-1]
        for t in masked.split(b"\n"):
            line_no += 1
            e = counts.get(t)
            if e is None:
                if len(counts) >= max_templates:
                    overflow = True
                    continue
                counts[t] = [1, [line_no]]
            else:
                e[0] += 1
                if len(e[1]) < keep:
                    e[1].append(line_no)
    n = line_no
    if rare_max is None:
        # "rare" is relative: 5 sightings are rare among 600,000 lines, common among 180
        rare_max = max(1, min(5, n // 20_000)) if n < 100_000 else max(5, n // 100_000)
    picked: list[Template] = []
    candidates: list[int] = []
    for t, (c, lines) in counts.items():
        err = bool(_ERROR_LEVEL.search(t))
        if c <= rare_max or err:
            picked.append(Template(t.decode("utf-8", "replace"), c, lines, err))
    # Rarest first; error-level shapes before others at equal rarity.
    picked.sort(key=lambda x: (x.count, not x.error_level, x.lines[0]))
    for tp in picked:
        for ln in tp.lines:
            if len(candidates) >= max_candidates:
                break
            candidates.append(ln)
    common = sorted(
        (Template(t.decode("utf-8", "replace"), c, v[:1], bool(_ERROR_LEVEL.search(t)))
         for t, (c, v) in counts.items() if c > rare_max),
        key=lambda x: -x.count,
    )[:10]
    return Profile(lines=n, bytes=size, templates_total=len(counts), templates=picked,
                   candidates=sorted(set(candidates)), common=common, overflow=overflow,
                   rare_max=rare_max)
