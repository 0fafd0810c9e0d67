"""The size gate: pick direct | grep | profile | fanout from the probe and the question.

The gate's decision is final: what it returns is what runs and what the gate event records
(the several-files and one-log rules, code-only preferences and the calibration note are all
applied here). Every decision carries human-readable reasons; the estimate and what code found
while planning are the strategy's, reported after these reasons.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rlm.corpus.grep import candidate_anchors, extract_anchors
from rlm.corpus.probe import Probe
from rlm.corpus.rarity import Rarity, rare_candidates
from rlm.corpus.source import TextSource
from rlm.errors import UsageError
from rlm.query import Query, read_query
from rlm.words import n_

DIRECT_MAX_BYTES = 256 * 1024
DIRECT_MAX_LINES = 5000
STRATEGIES = ("direct", "grep", "profile", "fanout")  # what the gate picks (and --strategy)
# and what runs in their place for a counting question (rlm.strategies.route)
ALL_STRATEGIES = STRATEGIES + ("count", "aggregate")

_OPEN = re.compile(
    r"\b(anomal\w*|unusual|odd|strange|weird|suspicious|wrong|problems?|issues?|errors?|"
    r"fail\w*|incidents?|warnings?|security|interesting|notable|outliers?|happened|unexpected)\b",
    re.I,
)


@dataclass
class Decision:
    strategy: str
    reasons: list[str] = field(default_factory=list)
    anchors: list[str] = field(default_factory=list)
    forced: bool = False
    counted: bool = False  # the question's weak candidates were counted in the corpus
    replaced: str | None = None  # the size strategy a counting strategy took the place of


def is_open_question(question: str) -> bool:
    return bool(_OPEN.search(question))


def decide(probe: Probe, question: str, usable_tokens: int, est_tokens: int,
           force: str | None = None, *, n_sources: int = 1, code_only: bool = False,
           window_note: str | None = None, sources: list[TextSource] | None = None,
           query: Query | None = None) -> Decision:
    """The final decision for a corpus of ``n_sources`` files (see :func:`by_size` for the
    size rule), on the question read once (`query`, rlm.query; read here when not given).
    Raises UsageError for an unknown or impossible --strategy. With `sources`, weak candidate
    anchors are counted in them (may raise ScanInterrupted on Ctrl-C)."""
    if force and force not in STRATEGIES:
        raise UsageError(f"unknown strategy {force!r} (direct, grep, profile, fanout)")
    query = query or read_query(question)
    question = query.rest  # the window's text is the window's, never a search term
    dec = by_size(probe, question, usable_tokens, est_tokens, force, sources, query.anchors)
    if dec.strategy == "direct" and n_sources > 1 and not dec.forced:
        if probe.kind == "log" and is_open_question(question) and not dec.anchors:
            dec = Decision("profile", dec.reasons + [
                f"a folder of {probe.files} logs with an open question: code profiles all "
                "files as one log (one template table, files in time order)"], dec.anchors)
        else:
            dec = Decision("fanout", dec.reasons + [f"{probe.files} files: one chunk per file "
                                                    "(direct reads take one file)"], dec.anchors)
    if dec.strategy == "profile" and probe.kind != "log" and not dec.forced:
        dec = Decision("fanout", dec.reasons + ["profiles need a log (a file or a folder of "
                                                "logs)"], dec.anchors)
    elif dec.strategy == "profile" and n_sources > 1:
        dec.reasons.append(f"a folder of {n_sources} logs is profiled as one log: one template "
                           "table, rotated files oldest first, per-file line numbers")
    if code_only:
        from rlm.codeonly.answers import adjust_decision

        dec = adjust_decision(dec, probe, question, n_sources, sources, query.window)
    if dec.strategy == "grep" and not dec.anchors:
        raise UsageError("--strategy grep needs anchors in the question (quoted text or ids)")
    if window_note:
        dec.reasons.insert(0, window_note)
    return dec


def by_size(probe: Probe, question: str, usable_tokens: int, est_tokens: int,
            force: str | None = None, sources: list[TextSource] | None = None,
            anchors: list[str] | None = None) -> Decision:
    """usable_tokens: material one call may hold; est_tokens: the corpus' estimated tokens."""
    anchors = list(extract_anchors(question) if anchors is None else anchors)
    size = (f"{n_(probe.bytes, 'byte')}, {n_(probe.lines, 'line')}, {n_(probe.files, 'file')}, "
            f"kind {probe.kind}")
    if force:
        counted = rare_anchors(question, sources, probe) if force == "grep" and not anchors else []
        anchors += [r.candidate for r in counted if r.rare]
        return Decision(force, [f"strategy forced by --strategy {force} ({size})"]
                        + [r.reason() for r in counted], anchors, True)
    fits = (probe.bytes <= DIRECT_MAX_BYTES and probe.lines <= DIRECT_MAX_LINES
            and est_tokens <= usable_tokens)
    if fits:
        return Decision("direct", [
            f"small corpus ({size}): ~{est_tokens:,} tokens fit the usable window of "
            f"{usable_tokens:,} tokens, so one direct call reads all of it"], anchors)
    why = [f"too big for one call ({size}; ~{est_tokens:,} tokens vs a usable window of "
           f"{usable_tokens:,})"]
    dec = _too_big(probe, question, anchors, why, sources)
    dec.counted = True
    return dec


def _too_big(probe: Probe, question: str, anchors: list[str], why: list[str],
             sources: list[TextSource] | None) -> Decision:
    if not anchors:  # weak candidates (keen-jacket, follow-up): anchors only if rare here
        counted = rare_anchors(question, sources, probe)
        anchors = [r.candidate for r in counted if r.rare]
        why += [r.reason() for r in counted]
    if anchors:
        return Decision("grep", why + ["the question has anchors to search for: "
                                       + ", ".join(repr(a) for a in anchors)], anchors)
    if probe.kind == "log" and is_open_question(question):
        return Decision("profile", why + ["line-oriented log with an open question: code "
                                    "profiles line templates; rare and error-level lines "
                                    "become the candidates"], anchors)
    reason = "no anchors to grep for"
    if probe.kind == "log":
        reason += " and the question is not an open 'what is unusual' question"
    return Decision("fanout", why + [reason + ": every chunk is read by the model"], anchors)


def rare_anchors(question: str, sources: list[TextSource] | None, probe: Probe) -> list[Rarity]:
    """The question's weak candidates, each counted in the corpus by code (bounded scan)."""
    cands = candidate_anchors(question)
    if not cands or not sources:
        return []
    return rare_candidates(sources, cands, probe.lines)
