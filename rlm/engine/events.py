"""Typed events of a run, the same for every command.

A run reports progress as these dataclasses; sinks (the terminal progress, the run record, the
MCP server) receive ``(event.kind, event.as_dict())`` so they stay plain callables. Every event
about a unit carries the same fields whatever the command: the unit id (chunk or job), its
path and line range (0 when a unit spans several files).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Callable, ClassVar

from rlm.engine.outcomes import Status

Sink = Callable[[str, dict], None]


@dataclass
class Event:
    kind: ClassVar[str] = ""

    def as_dict(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        for k, v in d.items():
            if isinstance(v, Status):
                d[k] = v.value
        return d


@dataclass
class Gate(Event):
    kind: ClassVar[str] = "gate"
    strategy: str
    reasons: list[str] = field(default_factory=list)


@dataclass
class Plan(Event):
    """How many units the run (or one round of it) will call the model for."""

    kind: ClassVar[str] = "plan"
    total: int
    concurrency: int | None = None


@dataclass
class UnitStarted(Event):
    kind: ClassVar[str] = "start"
    chunk: str
    path: str = ""
    line_start: int = 0
    line_end: int = 0


@dataclass
class UnitDone(Event):
    """One unit ended (any status). ``findings`` are the claims it produced (ask's map)."""

    kind: ClassVar[str] = "chunk"
    chunk: str
    path: str
    line_start: int
    line_end: int
    status: Status
    reason: str | None = None
    findings: list = field(default_factory=list)
    tokens: int = 0
    calls: int = 0
    cached_calls: int = 0

    @property
    def ok(self) -> bool:
        return self.status is Status.OK

    @classmethod
    def of(cls, unit, status: Status, reason: str | None, usage, findings: list | None = None,
           ) -> "UnitDone":
        """From a ledger Unit, an outcome's status and reason, and the budget's usage so far."""
        return cls(unit.id, unit.path, unit.line_start, unit.line_end, status, reason,
                   findings or [], usage.total_tokens, usage.calls, usage.cached_calls)

    def as_dict(self) -> dict[str, Any]:
        d = super().as_dict()
        d["ok"] = self.ok
        d["error"] = self.reason  # the name sinks have read since the first release
        return d


@dataclass
class ReduceNote(Event):
    kind: ClassVar[str] = "reduce"
    msg: str


@dataclass
class Scan(Event):
    """Progress of a code scan (probe, profile, grep, chunk count), in bytes."""

    kind: ClassVar[str] = "scan"
    what: str
    done: int
    total: int


@dataclass
class Rejected(Event):
    """A model reply that was rejected (and retried): kept raw, scrubbed, in the run record."""

    kind: ClassVar[str] = "rejected"
    schema: str
    attempt: int
    reason: str
    reply: str = ""


def to_sink(sink: Sink | None) -> Callable[[Event], None]:
    """An emitter of typed events that feeds a plain (kind, data) sink."""
    if sink is None:
        return lambda ev: None
    return lambda ev: sink(ev.kind, ev.as_dict())
