"""The data of the "anomalies?" answer: event kinds ranked for a person on call.

Per kind, from the template table (rlm/corpus/templates.py) and the profile's rules
(rlm/corpus/signals.py): the template in words, its severity (the level field wherever the
format puts it, else the failure words of the message), the exact count, first and last time
as the file writes them, where (components, top 3 with counts) and 1-3 example lines. The
wording of the answer is the strategy's; every number here is code's.

A kind *reports a failure* when its level is critical or worse (FATAL, SEVERE, ...) and its
message is not a bare value dump (`instruction address: <*>`: one line of a register dump,
which the event line above it reports), or when its message has failure words and its level
is error or milder (`Failed password`, `Connection refused`, `timeout`). At the ERROR level
the level alone is not enough: programs write routine lines there (Apache's `[error]
workerEnv.init() ok`). "corrected" at INFO is not a failure. A kind whose reason is the
caller's error (`No such file or directory`, `Permission denied`: recipes/failures.toml) is
not a failure of the system; it is named apart (`caller_error`).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache

from rlm.corpus.header import host_of
from rlm.corpus.logset import where
from rlm.corpus.severity import ERROR_RANK
from rlm.corpus.templates import EventKind, settle
from rlm.prompts import recipe

WARN_RANK = 4
_STRONG = {"fatal", "panic", "panicked", "segfault", "segmentation fault", "oom", "out of memory",
           "killed", "crash", "crashed", "crashes", "corrupt", "corrupted", "corruption", "deadlock"}
_WORD = re.compile(r"[A-Za-z][A-Za-z-]+")
HOSTS_MAX_BYTES = 64 << 20  # hosts are counted (one more pass) on files up to this size
DUMP_WORDS = 4  # a message of at most this many words, ending in a value, with no failure word


def message_failure_words(kind: EventKind) -> list[str]:
    """Failure words of the message itself (the header's level word is not in the template)."""
    return kind.failure_words


def is_value_dump(kind: EventKind) -> bool:
    words = _WORD.findall(kind.shape.replace("<*>", " "))
    return (not message_failure_words(kind) and len(words) <= DUMP_WORDS
            and kind.shape.rstrip().endswith("<*>"))


@lru_cache(maxsize=1)
def _caller_reasons() -> re.Pattern:
    reasons = recipe.load("failures")["caller_errors"]["reasons"]
    return re.compile("|".join(re.escape(r) for r in reasons), re.I)


def caller_error(kind: EventKind) -> str | None:
    """The caller's error its message gives as the reason (`Permission denied`), or None."""
    m = _caller_reasons().search(kind.template)
    return m.group(0) if m else None


def reports_failure(kind: EventKind) -> bool:
    if caller_error(kind):
        return False
    if kind.rank is not None and kind.rank < ERROR_RANK:  # critical, alert, fatal
        return not is_value_dump(kind)
    return bool(message_failure_words(kind)) and (kind.rank is None or kind.rank <= WARN_RANK)


def severity_label(kind: EventKind) -> str:
    """The level as a person reads it: `FATAL`, `error`, or `failure words: failed, refused`
    when the format has no level or a mild one."""
    if kind.rank is not None and kind.rank <= WARN_RANK:
        return kind.level or kind.severity
    words = message_failure_words(kind)
    if words:
        return "failure words: " + ", ".join(words[:3])
    return kind.level or "no level"


@dataclass
class KindRow:
    kind: EventKind
    severity: str
    failure: bool  # reports a failure (see the module's doc)
    rules: list[str] = field(default_factory=list)  # the profile rules that picked it
    whys: list[str] = field(default_factory=list)
    examples: list[tuple[str, int, str]] = field(default_factory=list)  # (path, line, text)
    hosts: list[tuple[str, int]] = field(default_factory=list)  # exact, commonest first

    def as_dict(self) -> dict:
        k = self.kind
        return {"id": k.id, "template": k.template, "severity": self.severity,
                "failure": self.failure, "count": k.count, "first_line": k.first_line,
                "last_line": k.last_line, "first_seen": k.first_seen, "last_seen": k.last_seen,
                "where": [[w, n] for w, n in (self.hosts or k.components)[:3]],
                "hosts": [[h, n] for h, n in self.hosts[:3]],
                "components": [[c, n] for c, n in k.components[:3]], "rules": self.rules,
                "examples": [{"path": p, "line": n, "text": t} for p, n, t in self.examples]}


def _order(row: KindRow) -> tuple:
    k = row.kind
    words = message_failure_words(k)
    if k.rank is not None and k.rank <= WARN_RANK:
        rank = float(k.rank)
    elif words:  # no level: the words say how bad (`fatal`, `panic` beside `failed`)
        rank = 2.5 if _STRONG & set(words) else ERROR_RANK + 0.5
    else:
        rank = 8.0
    # failures first, the worst first, then the biggest, then the kinds more rules agree on
    return (not row.failure, rank, -k.count, -len(set(row.rules)), k.first_line)


def rank_kinds(prof, src, examples: int = 3, hosts_for: int = 12) -> list[KindRow]:
    """The profile's picked kinds and every kind that reports a failure (however common:
    80 `Got exception while serving` warnings are one row), ranked, with up to `examples`
    example lines each."""
    rows: dict[int, KindRow] = {}
    for tp in prof.templates:
        k = tp.kind
        if k is None:
            continue
        row = rows.get(k.id)
        if row is None:
            row = rows[k.id] = KindRow(k, severity_label(k), reports_failure(k))
        row.rules += [r for r in tp.rules if r not in row.rules]
        row.whys += [w for w in tp.whys if w not in row.whys]
    if prof.table is not None:
        extra = [k for k in prof.table.templates if k.id not in rows and reports_failure(k)]
        settle(src, prof.table, extra)  # their exact last line and times
        for k in extra:
            rows[k.id] = KindRow(k, severity_label(k), True, ["failure"],
                                 ["reports a failure: " + severity_label(k)])
    out = sorted(rows.values(), key=_order)
    whole = prof.table is not None and prof.table.counter is not None \
        and prof.table.counter.counted is None  # not a time window's lines
    if whole and src.size <= HOSTS_MAX_BYTES:
        count_hosts(src, prof.table, out[:hosts_for])
    for row in out:
        for ln in row.kind.examples[:examples]:
            f, local = where(src, ln)
            row.examples.append((f.display, local, src.line(ln, 400)))
    return out


def count_hosts(src, table, rows: list[KindRow]) -> None:
    """Each row's hosts (the node or host its lines' headers name), counted exactly over
    every line of its kind: one more pass over the file."""
    want = {r.kind.id: Counter() for r in rows}
    for n, tid in enumerate(table.assign(src), 1):
        c = want.get(tid)
        if c is not None:
            host = host_of(src.line(n, 400))
            if host:
                c[host] += 1
    for r in rows:
        r.hosts = want[r.kind.id].most_common()


def failure_lines(table, src) -> tuple[list[int], list[EventKind]]:
    """Every line of every kind that reports a failure (one pass over the file), and the kinds."""
    kinds = [k for k in table.templates if reports_failure(k)]
    return [n for n, _ in failure_line_kinds(table, src)], kinds


def failure_line_kinds(table, src, ranges: list[tuple[int, int]] | None = None):
    """(line, kind) of every line that reports a failure, in file order (one pass), only the
    lines in `ranges` when given (a time window's)."""
    want = {k.id: k for k in table.templates if reports_failure(k)}
    spans = iter(ranges) if ranges is not None else None
    span = next(spans, None) if spans is not None else None
    for n, tid in enumerate(table.assign(src), 1):
        k = want.get(tid)
        if k is None:
            continue
        if spans is not None:
            while span is not None and span[1] < n:
                span = next(spans, None)
            if span is None:
                return
            if n < span[0]:
                continue
        yield n, k


def left_out(table) -> list[tuple[EventKind, str]]:
    """The kinds a person might take for failures that the rule leaves out, with the reason:
    a caller's error, or the ERROR level with no failure word in the message."""
    out = []
    for k in table.templates:
        reason = caller_error(k)
        if reason:
            out.append((k, f"the caller's error `{reason}`"))
        elif k.rank == ERROR_RANK and not message_failure_words(k):
            out.append((k, "ERROR level, no failure word in the message"))
    return sorted(out, key=lambda kr: -kr[0].count)
