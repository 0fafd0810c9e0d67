"""The audit's findings: every citation checked by code, kept in a seen-set, rejections kept
for a recheck. Models cite, code quotes (rlm.verify.evidence); a finding is new only when no finding of
the same kind already covers an overlapping range of the same file."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rlm.verify import evidence
from rlm.corpus.chunk import Chunk, ShownLines
from rlm.verify.evidence import (
    EvidenceCheck,
    EvidenceStats,
    format_evidence_path,
    parse_evidence_path,
)
from rlm.repo.candidates import Candidate, check_pick, sane_claim
from rlm.verify.claim_support import support
from rlm.repo.corpus import RepoCorpus
from rlm.repo.files import is_doc_file
from rlm.repo.link_claims import LinkClaims
from rlm.schemas.report import Source
from rlm.schemas.repo_report import AuditFinding

DOC_NOTE = ("quoted from documentation or comments: the text is there, the behaviour is not "
            "checked against code")


@dataclass
class Rejected:
    """A claim whose evidence did not check out (a recheck may find its real line)."""

    kind: str
    module: str
    claim: str
    cited: str
    quote: str
    reason: str
    paths: list[str]
    round: int
    severity: str | None = None
    lens: str = "structure"
    rechecked: bool = False


@dataclass
class Findings:
    """Checked findings (the seen-set), rejected claims and the evidence counts."""

    corpus: RepoCorpus
    weak: bool = False
    items: list[AuditFinding] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    stats: EvidenceStats = field(default_factory=EvidenceStats)
    dropped_picks: int = 0
    unsupported_picks: int = 0  # picks whose claim the picked line did not support
    links: LinkClaims | None = None  # resolved test links, built on the first claim on a test

    def link_checked(self, claim: str, ev: EvidenceCheck) -> EvidenceCheck:
        """A claim that a test exercises a definition stands only when code resolved that link
        (rlm.repo.link_claims); the line is real either way."""
        if not ev.ok:
            return ev
        if self.links is None:
            self.links = LinkClaims(self.corpus.root)
        why = self.links.check(claim, ev.path, ev.line_start)
        return ev if why is None else EvidenceCheck("rejected", ev.path, ev.line_start,
                                                    ev.line_end, ev.text, why)

    def add(self, f: AuditFinding) -> bool:
        """Keep a checked finding unless the seen-set has it; True when it is new."""
        s = f.source
        for g in self.items:
            if (g.kind == f.kind and g.source.path == s.path and g.source.line_start <= s.line_end
                    and s.line_start <= g.source.line_end):
                return False
        f.id = f"f{len(self.items) + 1}"
        self.items.append(f)
        return True

    def make(self, ev: EvidenceCheck, kind: str, module: str, claim: str, quote: str, rnd: int,
             lens: str, chunk: str, severity: str | None = None,
             note: str | None = None) -> AuditFinding:
        basis = self.corpus.basis(ev.path, ev.line_start, ev.line_end)
        if is_doc_file(ev.path) or (kind == "fact" and basis == "docs"):
            kind = "doc"
        return AuditFinding(
            id="", claim=claim.strip() or "(no claim given)", evidence=ev.text,
            source=Source(path=ev.path, line_start=ev.line_start, line_end=ev.line_end),
            verified=kind != "doc", chunk=chunk, label=kind, group=module,
            note=(note or ev.reason or None) if kind != "doc" else DOC_NOTE,
            kind=kind, module=module, severity=severity if kind == "risk" else None, lens=lens,
            round=rnd, evidence_path=ev.evidence_path, quote=quote[:200], status=ev.status)

    # -- a module call's citations ---------------------------------------------------------
    def cited(self, chunk: Chunk, job_id: str, module: str, lens: str, item, kind: str,
              rnd: int) -> bool:
        """A fact or risk a module call cited as ``path:start-end`` with a quote."""
        ep = resolve_cited(chunk, item.evidence_path)
        root = self.corpus.root
        # the one evidence rule as ask applies it: the quote is looked for only in the lines
        # this call was shown (ShownLines); the whole file only says why it was not found
        ev = evidence.check(root, ep, item.quote, line_reader=lambda p: ShownLines(
            chunk, p.relative_to(root).as_posix()))
        if not ev.ok:
            real = evidence.check(root, ep, item.quote)
            if real.ok:
                ev = EvidenceCheck("rejected", real.path, real.line_start, real.line_end, "",
                                   f"{real.evidence_path} was not shown to this call (it was "
                                   f"shown {', '.join(p.ref() for p in chunk.parts[:4])})")
        ev = self.link_checked(item.claim, ev)
        self.stats.add(ev)
        sev = getattr(item, "severity", None)
        if not ev.ok:
            self.rejected.append(Rejected(kind, module, item.claim, item.evidence_path,
                                          item.quote, ev.reason, chunk.paths, rnd, sev, lens))
            return False
        return self.add(self.make(ev, kind, module, item.claim, item.quote, rnd,
                                  "structure" if kind == "fact" else "risks", job_id, sev))

    # -- a pick among numbered candidate lines ---------------------------------------------
    def picked(self, job, pick, rnd: int, kind: str, origin: Rejected | None = None) -> bool:
        """``origin``: the rejected claim a recheck job asked about (a failed recheck is not
        rechecked again)."""
        cand, ev = check_pick(self.corpus, job.mapping, pick.n, getattr(pick, "quote", ""))
        if self.weak and ev.ok and cand is not None and not sane_claim(pick.claim, cand.text):
            self.stats.add(ev)
            self.dropped_picks += 1  # a weak model's pick whose claim is not about its line
            return False
        quote = self.corpus.lines(cand.path)[cand.line - 1].strip() if cand and cand.line else ""
        if ev.ok and cand is not None:
            # the lens rule's reason is code's own words about the line: it counts as support
            sup = support(pick.claim, f"{quote}\n{cand.why}" if cand.why else quote, self.corpus)
            if not sup.ok:  # the line is real, the model's claim is not on it: not verified
                self.unsupported_picks += 1
                ev = EvidenceCheck("rejected", ev.path, ev.line_start, ev.line_end, ev.text,
                                   sup.reason())
            ev = self.link_checked(pick.claim, ev)
        self.stats.add(ev)
        if not ev.ok or cand is None:
            if origin is None:
                self.rejected.append(Rejected(
                    kind, job.module, pick.claim, ev.path if cand is None else ev.evidence_path,
                    getattr(pick, "quote", "") or quote, ev.reason, [c.path for c in job.cands][:1],
                    rnd, getattr(pick, "severity", None), job.lens, rechecked=True))
            return False
        # the rule's level (bandit's where the rule is one of its checks) over the model's word
        sev = (cand.severity or getattr(pick, "severity", None)) if kind == "risk" else None
        note = None
        if origin is not None:
            sev = (origin.severity or cand.severity) if kind == "risk" else None
            note = f"re-found after the citation {origin.cited} was rejected ({origin.reason})"
        return self.add(self.make(ev, kind, job.module, pick.claim, quote, rnd, job.lens,
                                  job.id, sev, note))

    def phrased(self, job, res, rnd: int, kind: str) -> None:
        """Weak-model lens calls: every candidate line becomes a finding (code's rule selected
        it; code quotes it); its claim is the model's when that mentions the line's words."""
        given: dict[int, str] = {}
        for c in (getattr(res, "claims", None) or []):
            given.setdefault(c.n, c.claim)
        for n, cand in job.mapping.items():
            _, ev = check_pick(self.corpus, job.mapping, n)
            self.stats.add(ev)
            if ev.ok:
                claim, note = phrase_or_code(cand, given.get(n, ""), res is not None)
                self.add(self.make(ev, kind, job.module, claim, cand.text.strip(), rnd, job.lens,
                                   job.id, cand.severity, note))


    def kept_by_code(self, job, kept: set[int], rnd: int, kind: str) -> None:
        """Risk-rule hits the model did not pick (or picked with a claim its line does not carry)
        stay findings in code's words: a model's answer never suppresses a code signal."""
        for n, cand in job.mapping.items():
            if n in kept:
                continue
            _, ev = check_pick(self.corpus, job.mapping, n)
            if ev.ok:
                claim, _ = phrase_or_code(cand, "", False)
                self.add(self.make(ev, kind, job.module, claim, cand.text.strip(), rnd, job.lens,
                                   job.id, cand.severity,
                                   f"selected by code ({cand.why}); kept by code: the model did "
                                   "not confirm it"))


def phrase_or_code(cand: Candidate, claim: str, answered: bool) -> tuple[str, str]:
    """The model's claim when it is sane for the line, else code's wording (and say whose)."""
    if answered and sane_claim(claim, cand.text):
        return claim, f"selected by code ({cand.why}); claim phrased by the model"
    return (f"{cand.why}: {' '.join(cand.text.split())[:100]}",
            f"selected by code ({cand.why}); claim written by code"
            + ("" if answered else " (the model call failed)"))


def resolve_cited(ch: Chunk, ep: str) -> str:
    """Lenient reading of what a model wrote, never of what the file says: a bare line range in
    a one-file chunk, or a path written without its folders that names exactly one file of the
    chunk, is completed to that file's path."""
    raw = ep.strip().strip("`").strip()
    paths = ch.paths
    if re.fullmatch(r"L?\d+(?:\s*[-–]\s*L?\d+)?", raw) and len(paths) == 1:
        return f"{paths[0]}:{raw}"
    try:
        p, a, b = parse_evidence_path(raw)
    except ValueError:
        return raw
    p = p.strip().lstrip("./") if p.startswith("./") else p.strip()
    if p not in paths:
        same = [x for x in paths if x.endswith("/" + p) or x.rsplit("/", 1)[-1] == p]
        if len(same) == 1:
            return format_evidence_path(same[0], a, b)
    return format_evidence_path(p, a, b)
