"""Severity wherever the format puts it, and an error lexicon for the message.

Severity ranks follow syslog: 0 emergency ... 3 error, 4 warning, 5 notice, 6 info, 7 debug.
Found in the record's header area (the first HEADER characters): level words (`FATAL`,
`SEVERE`, `ERROR`, BGL's `FAILURE`), Apache's `[error]`, Windows CBS's `, Error`, logcat's
` E ` / `E/`, a syslog priority `<3>`, a JSON `"level": "error"`. The lexicon looks at the
whole message for words of failure (fail, exception, refused, denied, timeout, unreachable,
corrupt, panic, abort, killed, OOM, segfault, ...). "interrupted" is one, the noun
"interrupt" is not: on real kernel logs it names the mechanism (`ACPI: PCI Interrupt Link`,
`program interrupt`, `critical input interrupt ... warning`), routine lines that the labels of
the LogHub BGL and Thunderbird samples call normal (evals/RESULTS.md, "Real logs").
"""

from __future__ import annotations

import re

HEADER = 160
ERROR_RANK = 3  # error or worse
_WORDS = {
    "EMERG": 0, "EMERGENCY": 0, "PANIC": 0, "FATAL": 0,
    "ALERT": 1, "CRIT": 2, "CRITICAL": 2, "SEVERE": 2, "FAILURE": 2,
    "ERROR": 3, "ERR": 3,
    "WARN": 4, "WARNING": 4, "NOTICE": 5, "INFO": 6, "INFORMATION": 6,
    "DEBUG": 7, "TRACE": 7, "FINE": 7, "FINER": 7, "FINEST": 7, "VERBOSE": 7,
}
_LOGCAT = {"V": 7, "D": 7, "I": 6, "W": 4, "E": 3, "F": 0, "A": 0}
_WORD = re.compile(r"(?<![\w-])(" + "|".join(sorted(_WORDS, key=len, reverse=True)) + r")(?![\w-])")
_BRACKET = re.compile(r"\[(emerg|alert|crit|error|warn|warning|notice|info|debug)\]", re.I)
_CBS = re.compile(r",\s+(Error|Warning|Info)\s")
# logcat: brief `E/Tag( 123):` at the start, or threadtime `... PID TID E Tag: ` after a number
_LOGCAT_RE = re.compile(r"^([VDIWEFA])/[\w.$-]+\s*(?:\(\s*[\d#]+\))?:|[\d#]\s+([VDIWEFA])\s+[\w.$/-]+\s*:\s")
_PRI = re.compile(r"^<(\d{1,3})>")
_JSON_LEVEL = re.compile(r'"(?:level|lvl|severity|levelname)"\s*:\s*"(\w+)"', re.I)
_LEXICON = re.compile(
    r"\b(?:fail(?:s|ed|ure|ures|ing)?|exceptions?|refused|denied|timeouts?|timed out|"
    r"unreachable|corrupt(?:ed|ion)?|panic(?:ked)?|abort(?:s|ed|ing)?|killed|oom|"
    r"out of memory|segfault|segmentation fault|fatal|errors?|invalid|cannot|can't|unable|"
    r"broken|crash(?:ed|es)?|lost|unavailable|rejected|overflow|deadlock|interrupted|"
    r"(?:nil|null) pointer(?: dereference)?|nullpointerexception)\b",
    re.I,
)


def severity(line: str) -> int | None:
    """The record's severity rank (0 worst .. 7), or None when the header has none."""
    head = line[:HEADER]
    m = _PRI.match(head)
    if m:
        return int(m.group(1)) % 8
    m = _JSON_LEVEL.search(head) if head.startswith("{") else None
    if m:
        return _WORDS.get(m.group(1).upper())
    m = _BRACKET.search(head)
    if m:
        return _WORDS.get(m.group(1).upper())
    m = _CBS.search(head)
    if m:
        return _WORDS[m.group(1).upper()]
    m = _WORD.search(head)
    if m:
        return _WORDS[m.group(1)]
    m = _LOGCAT_RE.search(head)
    if m:
        return _LOGCAT[m.group(1) or m.group(2)]
    return None


def severity_name(rank: int | None) -> str:
    return {0: "fatal", 1: "alert", 2: "critical", 3: "error", 4: "warning", 5: "notice",
            6: "info", 7: "debug"}.get(rank, "none") if rank is not None else "none"


def lexicon_words(text: str) -> list[str]:
    """The failure words in a message (lower case, unique, in order)."""
    return list(dict.fromkeys(m.group(0).lower() for m in _LEXICON.finditer(text)))
