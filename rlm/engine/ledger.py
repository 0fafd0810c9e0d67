"""The coverage ledger: one account of what a run read, and one writer of its statement.

Every command (ask, audit, mine) keeps its counts in a :class:`Coverage` (through
:class:`Ledger` or directly) and closes it with :func:`close`, which decides ``complete`` by
the one rule below and writes the statement. The exit code follows from it (:func:`exit_code`).

What the ledger holds:
- read by the model: units answered (``chunks_ok``), their lines and bytes;
- scanned by code: lines and bytes that code searched, profiled or scored;
- failed / not run / interrupted: ``chunks_failed``, each with its status and reason;
- skipped: files left out, each with ``incomplete`` (text we should have read) or not (binary);
- declared cuts: notes the user must know (``declared``) and gaps that leave the answer
  incomplete (``gaps``: e.g. files the command needed read that were only scanned, a budget
  that stopped the rounds before they ran).

``complete`` means: not a dry run, no unit failed, was not run or was interrupted, the run was
not interrupted, no text file was skipped unread, and no gap was declared.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from rlm.engine.events import UnitDone
from rlm.engine.outcomes import Status
from rlm.schemas.report import Coverage, FailedChunk

from rlm.errors import EXIT_INCOMPLETE, EXIT_OK  # noqa: E402 - the one definition
MAX_LISTED_FAILED = 20
MAX_LISTED_SKIPPED = 10


@dataclass
class Unit:
    """What every unit of work is known by, whatever the command: id, path, line range
    (0-0 when it spans several files; the path then says so)."""

    id: str
    path: str
    line_start: int = 0
    line_end: int = 0
    piece: tuple[int, int] | None = None  # byte range, when the unit is part of one long line


class Ledger:
    """Counts one run's coverage as units end."""

    def __init__(self, *, bytes_total: int, lines_total: int, skipped: list[dict] | None = None,
                 declared: list[str] | None = None):
        self.cov = Coverage(bytes_total=bytes_total, lines_total=lines_total,
                            skipped=list(skipped or []), declared=list(declared or []))

    def planned(self, n: int) -> None:
        self.cov.chunks_total = n

    def read(self, lines: int, nbytes: int) -> None:
        """One unit answered: the model read these lines."""
        self.cov.chunks_ok += 1
        self.cov.lines_read_by_model += lines
        self.cov.bytes_read_by_model += nbytes

    def scanned(self, lines: int, nbytes: int) -> None:
        self.cov.lines_scanned_by_code += lines
        self.cov.bytes_scanned_by_code += nbytes

    def failed(self, unit: Unit, status: Status, reason: str | None) -> None:
        self.cov.chunks_failed.append(failed_unit(unit, status, reason))

    def declare(self, note: str) -> None:
        self.cov.declared.append(note)

    def gap(self, note: str) -> None:
        self.cov.gaps.append(note)

    def interrupted(self) -> None:
        self.cov.interrupted = True


def failed_unit(unit: Unit, status: Status, reason: str | None) -> FailedChunk:
    a, b = unit.piece or (None, None)
    return FailedChunk(chunk=unit.id, path=unit.path, line_start=unit.line_start,
                       line_end=unit.line_end, reason=reason or status.value, status=status.value,
                       byte_start=a, byte_end=b)


def failed_parts(unit_id: str, parts: list[tuple[str, int, int]], status: Status,
                 reason: str | None) -> list[FailedChunk]:
    """A unit that showed several files fails as one entry per file and line range (same id),
    so every failed file is named with its lines, as for a one-file chunk."""
    return [failed_unit(Unit(unit_id, p, a, b), status, reason) for p, a, b in parts] or \
        [failed_unit(Unit(unit_id, "(no file)"), status, reason)]


def ranges_of(lines: Iterable[tuple[str, int]]) -> list[tuple[str, int, int]]:
    """(path, line) pairs -> one (path, first, last) per path, in first-seen order."""
    out: dict[str, list[int]] = {}
    for path, ln in lines:
        out.setdefault(path, []).append(ln)
    return [(p, min(ls), max(ls)) for p, ls in out.items()]


def unit_of(unit_id: str, parts: list[tuple[str, int, int]]) -> Unit:
    """The unit as events name it: its one file and lines, or how many files it spans."""
    if len(parts) == 1:
        return Unit(unit_id, *parts[0])
    return Unit(unit_id, f"{len(parts)} files")


def done_event(job, outcome, budget) -> UnitDone:
    """A job (anything with ``id`` and ``shown()``) ended: the typed event for every sink."""
    unit = unit_of(job.id, ranges_of((p, n) for p, a, b in job.shown()
                                           for n in (a, b)))
    return UnitDone.of(unit, outcome.status, outcome.reason, budget.usage)


def is_complete(cov: Coverage, dry_run: bool = False) -> bool:
    """The one meaning of `complete` (see the module docstring)."""
    return (not dry_run and not cov.chunks_failed and not cov.interrupted and not cov.gaps
            and not cov.skipped_incomplete())


def exit_code(cov: Coverage, dry_run: bool = False) -> int:
    """0 when complete (or a dry run, which promises nothing), 3 when the answer is partial."""
    if dry_run:
        return EXIT_OK
    return EXIT_OK if cov.complete else EXIT_INCOMPLETE


def close(cov: Coverage, body: list[str], *, what: str = "the answer",
          dry_run: bool = False, interrupted_by: str = "Ctrl-C") -> Coverage:
    """Decide `complete` and write the statement: ``body`` (the command's own account of what
    was read, e.g. the file partition of a repository), then the failed units, skipped files,
    gaps and notes, then the verdict."""
    if cov.interrupted:
        cov.declared.append(f"interrupted by {interrupted_by}: what finished is reported")
    cov.complete = is_complete(cov, dry_run)
    cov.statement = " ".join(s for s in [*body, *_tail(cov)] if s) + " " + _verdict(
        cov, dry_run, what)
    cov.statement = cov.statement.strip()
    return cov


def failed_list(failed: list[FailedChunk], limit: int = MAX_LISTED_FAILED) -> str:
    """Failed units by id, path, lines and reason. Calls that failed are named one by one; a
    run of consecutive units of one file that were not run (or interrupted) for the same reason
    (e.g. the budget) is one entry, so every unit is named however many there are."""
    runs: list[list[FailedChunk]] = []
    for c in failed:
        last = runs[-1][-1] if runs else None
        if (last is not None and c.status != Status.FAILED.value and c.reason == last.reason
                and c.path == last.path
                and c.status == last.status and _num(c.chunk) == _num(last.chunk) + 1):
            runs[-1].append(c)
        else:
            runs.append([c])
    parts = []
    for r in runs[:limit]:
        a, b = r[0], r[-1]
        ids = a.chunk if len(r) == 1 else f"{a.chunk}-{b.chunk} ({len(r)} chunks)"
        rng = f":{a.line_start}-{b.line_end}" if a.line_start else ""
        if len(r) == 1 and a.byte_start is not None:  # a piece of one over-long line
            rng += f" bytes {a.byte_start}-{a.byte_end}"
        parts.append(f"{ids} {a.path}{rng} ({a.reason})")
    s = "; ".join(parts)
    if len(runs) > limit:
        s += f"; and {sum(len(r) for r in runs[limit:])} more (see the JSON report)"
    return s


def _num(unit_id: str) -> int:
    digits = "".join(ch for ch in unit_id if ch.isdigit())
    return int(digits) if digits else -2


_VERBS = {Status.FAILED.value: "failed and {was} not read",
          Status.NOT_RUN.value: "{was} not run",
          Status.INTERRUPTED.value: "{was} interrupted and not read"}


def _tail(cov: Coverage) -> list[str]:
    out: list[str] = []
    by_status: dict[str, list[FailedChunk]] = {}
    for c in cov.chunks_failed:
        by_status.setdefault(c.status, []).append(c)
    for status, verb in _VERBS.items():
        cs = by_status.get(status, [])
        if not cs:
            continue
        n = len({c.chunk for c in cs})  # a unit over several files has one entry per file
        one = n == 1
        s = (f"{n} {'chunk' if one else 'chunks'} " + verb.format(was="was" if one else "were")
             + ": " + failed_list(cs))
        out.append(s + ".")
    if cov.skipped:
        s = "Skipped: " + "; ".join(f"{x['path']} ({x['reason']})"
                                    for x in cov.skipped[:MAX_LISTED_SKIPPED])
        if len(cov.skipped) > MAX_LISTED_SKIPPED:
            s += f"; and {len(cov.skipped) - MAX_LISTED_SKIPPED} more"
        out.append(s + ".")
    out.extend(f"Not covered: {g}." for g in cov.gaps)
    out.extend(f"Note: {d}." for d in cov.declared)
    return out


def _verdict(cov: Coverage, dry_run: bool, what: str) -> str:
    if dry_run:
        return "Dry run: nothing was read by the model."
    return "Complete." if cov.complete else f"INCOMPLETE: {what} may miss what was not read."


# ------------------------------------------------------------------------------ ask's account

def mb(n: int) -> str:
    """Decimal units, like the byte counts beside them (1 MB = 1,000,000 bytes)."""
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f} MB"
    if n >= 1000:
        return f"{n / 1000:.1f} KB"
    return f"{n} byte{'s' if n != 1 else ''}"


def read_account(cov: Coverage, strategy: str, calls: int) -> list[str]:
    """The body of `ask`'s statement: what code scanned and what the model read."""
    parts: list[str] = []
    if cov.lines_scanned_by_code:
        verb = {"profile": "profiled", "grep": "searched", "count": "counted"}.get(strategy,
                                                                                "scanned")
        parts.append(f"{cov.lines_scanned_by_code:,} lines ({mb(cov.bytes_scanned_by_code)}) "
                     f"were {verb} by code")
    unit = "chunk" if cov.chunks_total == 1 else "chunks"
    parts.append(f"{cov.lines_read_by_model:,} lines ({mb(cov.bytes_read_by_model)}) were read "
                 f"by the model in {cov.chunks_ok} of {cov.chunks_total} {unit} ({calls} calls)")
    unread = cov.lines_total - max(cov.lines_read_by_model, cov.lines_scanned_by_code)
    if strategy in ("direct", "fanout", "aggregate") and unread > 0 and not cov.chunks_failed:
        parts.append(f"{unread:,} lines were not read")
    return ["Coverage: " + "; ".join(parts) + "."]
