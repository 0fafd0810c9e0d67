"""The audit's job kinds, one type each with its own handling of an answer and of a failure.

- ``ModuleJob``: a module (or part of one) shown whole with numbered lines; the model cites
  facts and risks. Round 1's module map is made of these (``map_part``); a re-read of a failed
  part and the one-file digs of thin modules too.
- ``PickJob``: numbered candidate lines that code selected (a lens, or a file's code lines);
  the model picks numbers and phrases claims.
- ``RecheckJob``: lines that share words with a claim whose citation was rejected.
- ``PhraseJob``: a weak model only phrases the lines code selected (they are the findings).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rlm.repo.audit.findings import Rejected
from rlm.repo.audit.lenses import lenses
from rlm.corpus.chunk import Chunk
from rlm.repo.calls import est_tokens
from rlm.repo.candidates import Candidate, repetitive
from rlm.engine.ledger import failed_parts, ranges_of
from rlm.engine.outcomes import Status
from rlm.engine.window import PROMPT_OVERHEAD_TOKENS
from rlm.schemas.report import FailedChunk

if TYPE_CHECKING:
    from rlm.repo.audit.state import AuditState

@dataclass
class Job:
    id: str
    module: str
    task: str
    fields: dict
    lens: str = "structure"

    @property
    def material(self) -> str:
        return self.fields.get("material", "")

    def est_prompt_tokens(self) -> int:
        return est_tokens(len(self.material)) + PROMPT_OVERHEAD_TOKENS

    def shown(self) -> list[tuple[str, int, int]]:
        """(path, first line, last line) of what this call shows the model."""
        raise NotImplementedError

    def failed_entries(self, status: Status, reason: str) -> list[FailedChunk]:
        return failed_parts(self.id, self.shown(), status, reason)

    def on_ok(self, st: AuditState, res, rnd: int) -> None:
        raise NotImplementedError

    def on_failed(self, st: AuditState, status: Status, reason: str, rnd: int) -> None:
        """An extra dig (lens, recheck, one-file re-read) that failed: its files had been read
        in the module map, so it is declared, not counted as unread."""
        st.other_failed.extend(self.failed_entries(status, reason))


@dataclass
class ModuleJob(Job):
    chunk: Chunk | None = None
    map_part: bool = True  # a part of round 1's module map (else a one-file dig)
    retry_of: str | None = None  # the failed map part this job reads again

    def shown(self) -> list[tuple[str, int, int]]:
        return [(p.path, p.start, p.end) for p in self.chunk.parts]

    def on_ok(self, st: AuditState, res, rnd: int) -> None:
        for p in self.chunk.parts:
            st.read.add(p.path, p.start, p.end)
        st.failed_map.pop(self.retry_of or "", None)
        purpose = " ".join(res.purpose.split())
        if purpose and repetitive(purpose):
            st.dropped_purposes += 1
        elif purpose:
            st.purpose.setdefault(self.module, []).append(purpose)
        st.apis.setdefault(self.module, []).extend(a.strip() for a in res.key_apis if a.strip())
        for fct in getattr(res, "facts", []):
            st.findings.cited(self.chunk, self.id, self.module, self.lens, fct, "fact", rnd)
        for r in getattr(res, "risks", []):
            st.findings.cited(self.chunk, self.id, self.module, self.lens, r, "risk", rnd)

    def on_failed(self, st: AuditState, status: Status, reason: str, rnd: int) -> None:
        if not self.map_part:
            return super().on_failed(st, status, reason, rnd)
        if self.retry_of:
            st.failed_map.pop(self.retry_of, None)
            st.retried.add(self.id)
        st.failed_map[self.id] = FailedPart(self, status, self.failed_entries(status, reason))


@dataclass
class FailedPart:
    """A part of the module map whose call failed (so its files were not read)."""

    job: ModuleJob
    status: Status
    entries: list[FailedChunk]


@dataclass
class PickJob(Job):
    cands: list[Candidate] = field(default_factory=list)
    mapping: dict = field(default_factory=dict)

    def shown(self) -> list[tuple[str, int, int]]:
        return ranges_of((c.path, c.line) for c in self.cands)

    def kind(self) -> str:
        return lenses()[self.lens].kind

    def on_ok(self, st: AuditState, res, rnd: int) -> None:
        for c in self.cands:
            st.read.add(c.path, c.line, c.line)
        kept = {pk.n for pk in res.picks if st.findings.picked(self, pk, rnd, self.kind())}
        if self.lens == "risks":  # a risk rule's hit is a code signal: no answer suppresses it
            st.findings.kept_by_code(self, kept, rnd, self.kind())


@dataclass
class RecheckJob(PickJob):
    origin: Rejected | None = None

    def kind(self) -> str:
        return self.origin.kind

    def on_ok(self, st: AuditState, res, rnd: int) -> None:
        for c in self.cands:
            st.read.add(c.path, c.line, c.line)
        for pk in res.picks:
            st.findings.picked(self, pk, rnd, self.kind(), origin=self.origin)


@dataclass
class PhraseJob(PickJob):
    def on_ok(self, st: AuditState, res, rnd: int) -> None:
        for c in self.cands:
            st.read.add(c.path, c.line, c.line)
        st.findings.phrased(self, res, rnd, self.kind())

    def on_failed(self, st: AuditState, status: Status, reason: str, rnd: int) -> None:
        super().on_failed(st, status, reason, rnd)
        if status.ran_and_failed:  # code's rule found the lines: code words them
            st.findings.phrased(self, None, rnd, self.kind())
