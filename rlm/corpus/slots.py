"""The value a log line holds for a group-by slot ("which IP", "per user", "top 5 nodes").

Slot names from the question are normalised (`ip address`, `ips`, `clients` -> ip), and each
slot has one extractor over the line's text. A line without the slot is grouped as "(none)",
so the groups still add up to the total. Time units, levels, components and `key=value`
fields are rlm.corpus.counts.group_key's.
"""

from __future__ import annotations

import re

from rlm.corpus.idents import PATTERNS, find_idents
from rlm.corpus.literals import LEVEL_AFTER_PID

SLOTS = {
    "ip": {"ip", "ips", "address", "addresses", "ip address", "ip addresses", "client",
           "clients", "source", "sources", "remote", "rhost", "rhosts"},
    "user": {"user", "users", "username", "usernames", "account", "accounts", "login", "logins"},
    "node": {"node", "nodes", "location", "locations"},
    "host": {"host", "hosts", "server", "servers", "machine", "machines", "hostname", "hostnames"},
    "port": {"port", "ports"},
    "block": {"block", "blocks", "block id", "block ids"},
    "pid": {"pid", "pids", "process id", "process ids"},
    "instance": {"instance", "instances", "vm", "vms"},
    "component": {"component", "components", "service", "services", "module", "modules",
                  "logger", "loggers", "class", "classes", "program", "programs", "daemon",
                  "daemons", "facility", "process", "processes", "category", "categories"},
    "level": {"level", "levels", "severity", "severities"},
    "hour": {"hour", "hours"}, "minute": {"minute", "minutes"}, "day": {"day", "days"},
    "template": {"shape", "shapes", "template", "templates", "message", "messages", "kind",
                 "kinds", "type", "types", "error", "errors", "event", "events"},
}
_NAME = {alias: slot for slot, aliases in SLOTS.items() for alias in aliases}
_RX = dict(PATTERNS)
_IPV4 = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w]|\.\d)")
_USER = [re.compile(p) for p in (
    r"\bfor (?:invalid user |illegal user )?(\S+) from\b",
    r"\b(?:invalid|illegal) user (\S+)",
    r"\buser[= ]\"?([^\s\",;()]+)",
    r"\blogname=(\S+)",
)]
_NODE = re.compile(r"\b[A-Z]\d\d-M\d-N[\dA-F]-[A-Z0-9]:J\d\d-U\d\d\b|\bnode-\d+\b|\bR\d\d-M\d-N[\dA-F]\b")
_PORT = re.compile(r"\bport[= ](\d{1,5})\b")
_PID = re.compile(r"\[(\d+)\]")
# OpenStack's `[instance: bf8c824d-f099-4433-a41e-e3da7578262e]`
_INSTANCE = re.compile(r"\binstance[:= ]+([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-"
                       r"[0-9a-f]{12})", re.I)
# the pid column (rlm.corpus.literals reads the same): after the time, before the level
# (`03-17 16:13:38.811  1702  2395 D` logcat, `081109 203615 148 INFO` HDFS)
_PID_COLUMN = re.compile(r"^\S*\s*(?:\d\d:\d\d:\d\d(?:[.,]\d+)?\s+(\d+)\s+(?:\d+\s+)?|\d{6}\s+(\d+)\s+)"
                         + LEVEL_AFTER_PID)


def slot_name(word: str | None) -> str | None:
    """The slot a question's group-by word names, or None."""
    if not word:
        return None
    w = " ".join(word.lower().split())
    return _NAME.get(w) or _NAME.get(w.split()[-1])


def slot_value(slot: str, line: str, template: str | None = None) -> str:
    """The line's value for `slot` ("(none)" when it has none)."""
    if slot == "ip":
        for m in _IPV4.finditer(line):  # 0.0.0.0 is a bind-all address, never a peer
            if m.group(0) != "0.0.0.0":
                return m.group(0)
        v6 = [t for _, _, t, k in find_idents(line) if k == "ipv6"]
        return v6[0] if v6 else "(none)"
    if slot == "user":
        for rx in _USER:
            m = rx.search(line)
            if m and m.group(1):
                return m.group(1)
        return "(none)"
    if slot == "node":
        m = _NODE.search(line)
        return m.group(0) if m else "(none)"
    if slot == "port":
        m = _PORT.search(line)
        return m.group(1) if m else "(none)"
    if slot == "block":
        m = _RX["block"].search(line)
        return m.group(0) if m else "(none)"
    if slot == "pid":
        m = _PID_COLUMN.match(line[:80])  # a column first: a message may hold `[N]` too
        if m:
            return m.group(1) or m.group(2)
        m = _PID.search(line)
        return m.group(1) if m else "(none)"
    if slot == "instance":
        m = _INSTANCE.search(line)
        return m.group(1) if m else "(none)"
    if slot == "template":
        if template:
            return template
        from rlm.corpus.counts import group_key

        return group_key("shape", line).replace("#", "<*>")
    from rlm.corpus.counts import group_key

    return group_key("host" if slot == "host" else slot, line)
