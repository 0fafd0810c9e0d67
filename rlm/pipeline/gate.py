"""The gate: the one place that decides how `rlm ask` answers.

The size rule picks direct | grep | profile | fanout from the probe and the question; then, in
the same call, the several-files and one-log rules, the code-only preferences (no model: what
code can answer completely) and the counting strategies (a counting question runs ``count``,
code counting a log's lines, or ``aggregate``, a model extracting records that code counts) are
applied. What :func:`decide` returns is what runs, what the gate event records and what the
report names. Every decision carries human-readable reasons; the estimate and what code found
while planning are the strategy's, reported after these reasons.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rlm.corpus.grep import candidate_anchors, extract_anchors, search
from rlm.corpus.probe import Probe
from rlm.corpus.rarity import Rarity, rare_candidates
from rlm.corpus.source import TextSource
from rlm.errors import UsageError
from rlm.pipeline.aggregate import wants
from rlm.pipeline.codeonly.word_anchors import rare_words
from rlm.pipeline.query import Query, read_query
from rlm.words import n_

DIRECT_MAX_BYTES = 256 * 1024
DIRECT_MAX_LINES = 5000
STRATEGIES = ("direct", "grep", "profile", "fanout")  # what the gate picks (and --strategy)
# and what runs in their place for a counting question (:func:`counting`)
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
    size rule), on the question read once (`query`, rlm.pipeline.query; read here when not
    given). Raises UsageError for an unknown or impossible --strategy. With `sources`, weak
    candidate anchors are counted in them (may raise ScanInterrupted on Ctrl-C)."""
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
        dec = _code_only(dec, probe, question, n_sources, sources, query.window)
    if dec.strategy == "grep" and not dec.anchors:
        raise UsageError("--strategy grep needs anchors in the question (quoted text or ids)")
    counted_by = counting(dec, probe, query, sources, code_only)
    if counted_by:
        dec.replaced, dec.strategy = dec.strategy, counted_by
    if window_note:
        dec.reasons.insert(0, window_note)
    return dec


def counting(dec: Decision, probe: Probe, query: Query, sources: list[TextSource] | None,
             code_only: bool) -> str | None:
    """The counting strategy that takes the size strategy's place, if any (never when the
    strategy was forced): ``count`` for a counting question about a log (code counts the
    matching lines), else ``aggregate`` for one that a model would have to read (direct,
    fan-out, or grep for quoted labels that are not in the text)."""
    if dec.forced:
        return None
    if probe.kind == "log" and sources and query.counts:
        return "count"
    question = query.text
    if code_only or not wants(question):
        return None
    if dec.strategy in ("direct", "fanout"):
        return "aggregate"
    if dec.strategy == "grep" and not any(search(src, dec.anchors).hit_lines
                                          for src in sources or []):
        return "aggregate"  # quoted labels that are not in the text: infer, then count
    return None


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


def _code_only(dec: Decision, probe: Probe, question: str, n_sources: int,
               sources: list[TextSource] | None, window=None) -> Decision:
    """No model: prefer what code can answer completely (grep on anchors, profile on an open
    question about a log or on a log's time window) over a direct read nobody would do."""
    if dec.forced or dec.strategy not in ("direct", "fanout"):
        return dec
    instead = "instead of a direct read" if dec.strategy == "direct" else "instead of ranking"
    if dec.anchors:
        return Decision("grep", dec.reasons + ["no model: code searches for the anchors "
                                               f"{instead}"], dec.anchors, counted=dec.counted)
    if dec.strategy == "direct" and probe.kind == "log" and n_sources == 1 and \
            is_open_question(question):
        return Decision("profile", dec.reasons + ["no model: code profiles the log instead "
                                                  "of a direct read"], dec.anchors)
    dec = _rare_words(dec, probe, question, sources, instead)
    if dec.strategy != "grep" and probe.kind == "log" and window is not None:
        return Decision("profile", dec.reasons + [  # a window restricts what code profiles
            f"no model: code profiles the log's lines in the question's time window {instead}"],
            dec.anchors, counted=True)
    return dec


def _rare_words(dec: Decision, probe: Probe, question: str,
                sources: list[TextSource] | None, instead: str) -> Decision:
    """No anchors: the weak candidates (when the gate did not count them, on a small corpus),
    then the plain content words, each counted by code; the rare ones are searched for."""
    counted = [] if dec.counted else rare_anchors(question, sources, probe)
    counted += rare_words(question, sources, probe.lines)
    anchors = [r.candidate for r in counted if r.rare]
    reasons = dec.reasons + [r.reason() for r in counted]
    if not anchors:
        return Decision(dec.strategy, reasons, [], counted=True)
    return Decision("grep", reasons + [
        "no model: code searches for the question's rare words "
        f"({', '.join(repr(a) for a in anchors)}) {instead}"], anchors, counted=True)
