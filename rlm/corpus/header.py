"""A log line's header parsed apart from its message, on the masked shape of the line.

Works on a line whose digit-bearing tokens are already `#` (rlm/corpus/mask.py), once per
distinct shape, never per line. The header is what a logger writes before the event: times
and dates (`#`, month and day names, `[Sun Dec # # #]`), separators (`-`, `|`), the level
(`INFO`, `[notice]`, `, Info`, logcat's ` E `), a thread in brackets right after the level
(`[main]`), a host before a `proc[pid]:` component, and the component (`sshd[#]:`,
`dfs.DataNode$PacketResponder:`, `KERNEL` before `INFO`). No per-format settings: the same
scanner reads syslog, log4j, Apache, BGL, HDFS, logcat, Windows CBS, ZooKeeper, ...

The component stays part of the event (a message is read in its component), the host, times,
level and thread do not: they vary within one event.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import islice

LEVELS = {
    "EMERG": 0, "EMERGENCY": 0, "PANIC": 0, "FATAL": 0, "ALERT": 1, "CRIT": 2, "CRITICAL": 2,
    "SEVERE": 2, "FAILURE": 2, "ERROR": 3, "ERR": 3, "WARN": 4, "WARNING": 4, "NOTICE": 5,
    "INFO": 6, "INFORMATION": 6, "DEBUG": 7, "TRACE": 7, "FINE": 7, "FINER": 7, "FINEST": 7,
    "VERBOSE": 7,
}
_LOGCAT = {"V": 7, "D": 7, "I": 6, "W": 4, "E": 3, "F": 0, "A": 0}
CALENDAR = frozenset(
    "Mon Tue Wed Thu Fri Sat Sun Monday Tuesday Wednesday Thursday Friday Saturday Sunday "
    "Jan Feb Mar Apr May Jun Jul Aug Sep Sept Oct Nov Dec January February March April June "
    "July August September October November December".split())
_TIMEISH = re.compile(r"[#:.,/|T-]*#[#:.,/|TZ+-]*")  # masked dates, times, epochs, pids
_COMPONENT = re.compile(r"[A-Za-z_][\w.$/()\[\]#<>-]*:")  # sshd[#]:  dfs.FSNamesystem:
_BRACKETS = r"\[(?:[^\[\]]++|\[[^\[\]]*+\])*+\]"  # a bracket group, one level of nesting (possessive: no backtracking)
_UNIT = re.compile(rf"(?:{_BRACKETS}|[^\s|\[]+)+|\|")  # words and bracket groups written together, or a pipe
_LOGGER = re.compile(r"[A-Za-z_][\w$-]*(?:\.[\w$-]+)+")  # nova.compute.manager
_FIELD = re.compile(r"[A-Z0-9_#][A-Z0-9_#.:-]*")  # NULL, RAS, KERNEL, #: header fields, not words
_LABEL = re.compile(r"[A-Z_]+")  # an alert category, NULL, RAS: a field, not a host
HEAD_UNITS = 12
MASK_TEXT = re.compile(r"[A-Za-z0-9_.:+-]*[0-9][A-Za-z0-9_.:+-]*|\b[0-9a-fA-F]{8,}\b")  # rlm.corpus.mask's rule  # units of a line searched for a header


@dataclass
class Header:
    end: int  # the message starts here (index into the masked line)
    units: int = 0  # header units (words and bracket groups): the same count in the raw line
    level: str | None = None  # the level word as written (INFO, notice, E)
    rank: int | None = None  # its syslog rank (0 worst .. 7)
    component: str | None = None


def _level(unit: str) -> tuple[str, int] | None:
    word = unit.strip("[]<>,:")
    rank = LEVELS.get(word.upper()) if word.isalpha() else None
    if rank is not None and (word.isupper() or word.istitle() or unit.startswith("[")):
        return word, rank
    return None


def _timeish(unit: str) -> bool:
    if "#" not in unit:  # fast path: most units are words
        return unit in ("-", "|") or unit.rstrip(",") in CALENDAR
    if unit.startswith("["):
        inner = unit[1:-1].split()
        return bool(inner) and all(_TIMEISH.fullmatch(w) or w in CALENDAR for w in inner)
    return bool(_TIMEISH.fullmatch(unit)) or unit.rstrip(",") in CALENDAR or unit in ("-", "|")


def split_header(masked: str) -> Header:
    """Where the message of a masked line starts, and the level and component found before."""
    units = [(m.start(), m.end(), m.group(0)) for m in islice(_UNIT.finditer(masked), HEAD_UNITS)]
    head = _split(units)
    head.units = sum(1 for u in units if u[1] <= head.end)
    return head


def message_start(raw: str) -> int:
    """Where the message of a raw line starts: masking keeps spaces and brackets, so the
    header has as many units in the raw line as in its masked shape."""
    head = split_header(MASK_TEXT.sub("#", raw[:400]))
    if not head.units:
        return 0
    for k, m in enumerate(_UNIT.finditer(raw)):
        if k + 1 == head.units:
            return m.end()
    return 0


def host_of(raw: str) -> str | None:
    """The host (node) a raw line's header names, or None: the first header unit with a
    letter that is not a month or day name, a level, a component (`name:`, the `program -`),
    a bracket group, a one-letter logcat level or an upper-case label (`KERNDTLB`, `NULL`,
    `RAS`): `LabSZ`, `R02-M1-N0-C:J12-U11`, `dn228`."""
    masked = MASK_TEXT.sub("#", raw[:400])
    head = split_header(masked)
    comp = head.component
    for k, m in enumerate(islice(_UNIT.finditer(raw), head.units)):
        unit = m.group(0)
        if (len(unit) < 2 or unit[0] == "[" or unit.endswith(":") or unit in CALENDAR
                or unit.upper() in LEVELS or not any(c.isalpha() for c in unit)
                or _LABEL.fullmatch(unit)):
            continue
        if comp is not None and MASK_TEXT.sub("#", unit) in comp.split():
            continue
        return unit
    return None


def _split(units: list[tuple[int, int, str]]) -> Header:
    head = Header(0)
    i, n, timed = 0, len(units), False
    if n > 1 and _FIELD.fullmatch(units[0][2]) and "#" not in units[0][2] and _timeish(units[1][2]):
        i = 1  # a label before the time (BGL's alert category `KERNDTLB`, `-` when none)
    while i < n and _timeish(units[i][2]):
        word = units[i][2]
        head.end, i = units[i][1], i + 1
        if word == "-" and timed and not (i < n and _level(units[i][2])):
            return head  # `time - message`: the dash ends the header (not `time - INFO`)
        timed = timed or word not in ("-", "|")
    if i < n and timed and units[i][2] in _LOGCAT and i + 1 < n and _COMPONENT.fullmatch(units[i + 1][2]):
        head.level, head.rank = units[i][2], _LOGCAT[units[i][2]]  # logcat: `# # E Tag: msg`
        head.component, head.end = units[i + 1][2], units[i + 1][1]
        return head
    if timed and i + 1 < n and units[i][2] != "-":  # `time program - message`, `time prog *64 - msg`
        dash = next((j for j in (i + 1, i + 2) if j < n and units[j][2] == "-"), None)
        words = [u[2] for u in units[i:dash or i]]
        if dash is not None and not _level(words[0]) and not any(w.endswith(":") for w in words):
            head.component, head.end = " ".join(u[2] for u in units[i:dash]), units[dash][1]
            return head
    # up to two words (a host, a subsystem) before the level or the component; more when
    # they are all upper-case names or values (BGL's `NULL # NULL RAS MMCS ERROR`)
    for j in range(i, min(i + 6, n)):
        if j - i >= 2 and not all(_FIELD.fullmatch(u[2]) for u in units[i:j]):
            return head
        lv = _level(units[j][2])
        if lv and (timed or j == 0):
            head.level, head.rank = lv
            if j > i:
                head.component = " ".join(u[2] for u in units[i:j])
            head.end, i = units[j][1], j + 1
            break
        if timed and _COMPONENT.fullmatch(units[j][2]) and j - i <= 1:
            head.component, head.end = units[j][2], units[j][1]
            return head
    else:
        return head
    return _after_level(units, i, head)


def _after_level(units, i: int, head: Header) -> Header:
    """After a level: a thread in brackets, then a component (`name:`, or a dotted name or
    bracket group followed by ` - ` / a bracket), then an optional `-`."""
    n = len(units)
    while i < n and units[i][2] in ("-", "|"):
        head.end, i = units[i][1], i + 1
    if i < n and units[i][2].startswith("[") and i + 1 < n:
        head.end, i = units[i][1], i + 1  # a thread: [main], [QuorumPeer[myid=#]/#@#]
        if i < n and units[i][2] == "-":
            return Header(units[i][1], level=head.level, rank=head.rank, component=head.component)
    if i < n and _COMPONENT.fullmatch(units[i][2]):
        head.component, head.end = units[i][2], units[i][1]
    elif i + 1 < n and _LOGGER.fullmatch(units[i][2]) and units[i + 1][2].startswith("["):
        head.component, head.end = units[i][2], units[i + 1][1]  # logger [request context]
    return head
