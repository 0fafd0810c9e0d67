"""Library entry points. `ask()` runs: probe -> gate -> strategy -> verify -> synthesize -> report.

The CLI only renders what this returns. Everything here works on a `Corpus` (one file, or the
text files of a folder) through `TextSource`, so nothing reads a corpus whole into a prompt.
"""

from __future__ import annotations

import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

import anyio

from rlm import recipe, redact_model, store
from rlm.corpus.grep import regions, search
from rlm.corpus.index import Chunk, ShownLines, iter_chunks
from rlm.corpus.probe import Probe, classify, probe_source
from rlm.corpus.profile import profile_log
from rlm.corpus.source import TextSource
from rlm.engine.budget import Budget, watch_event, watch_sigint
from rlm.engine.call import call_json, on_rejected
from rlm.engine.echo import echo_reason
from rlm.codeonly import answers as by_code
from rlm.codeonly.timeline import describe_group, grep_timeline
from rlm.codeonly.wording import guard_label, wording_failed_note
from rlm.engine.candidates import Group, group_candidates, judge_group
from rlm.engine.mapper import Outcome, map_items
from rlm.engine.reducer import reduce_findings, render
from rlm.engine.synth import synthesize
from rlm.errors import UsageError
from rlm import evidence
from rlm.gate import Decision, decide
from rlm.models.base import Limits, Model
from rlm.models.endpoints import endpoint_usage
from rlm.run import ledger
from rlm.run.events import Gate, Plan, ReduceNote, Rejected, UnitDone, UnitStarted
from rlm.run.ledger import Unit
from rlm.models.none import NOTICE as NO_MODEL_NOTICE
from rlm.models.profile import is_code_only, profile_of
from rlm.schemas import (
    CorpusInfo, Coverage, Estimate, EvidenceCounts, FailedChunk, Finding, GateInfo, Report, Source, UsageInfo,
)

PROMPT_OVERHEAD_TOKENS = 350  # instructions + schema + question, per call (measured on recipes)
MAX_LINE_CHARS = 2000  # a line longer than this is shown cut in prompts (declared)


@dataclass
class AskOptions:
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    sub_model: str | None = None  # for the fan-out's sub-calls (map, judge, merge); same server
    concurrency: int = 4
    max_tokens: int | None = None  # total token budget of the run
    max_calls: int | None = None
    max_wall_s: float | None = None
    timeout: float = 120.0
    strategy: str | None = None
    dry_run: bool = False
    usable_fraction: float = 0.75  # of the model context, for one call's material (until calibrated)
    command: str = "ask"
    no_cache: bool = False  # fresh model calls (answers are still stored, for --resume)
    resume: str | None = None  # run id (prefix, or "last") whose answered calls are reused
    argv: list[str] | None = None  # the command line, for the run record (secrets redacted)
    redact: bool | None = None  # None: decided by RLM_REDACT, config, endpoint (rlm.redact_model)
    redact_report: bool = False  # also mask the local report and the run record


@dataclass
class Corpus:
    """One file or the readable text files of a folder, with what was skipped and why."""

    path: str
    sources: list[TextSource]
    probe: Probe
    skipped: list[dict] = field(default_factory=list)

    def close(self) -> None:
        for s in self.sources:
            s.close()


# ------------------------------------------------------------------------------------ corpus

def open_corpus(path_arg: str) -> Corpus:
    p = Path(path_arg)
    if path_arg != "-" and p.is_dir():
        return _open_folder(p, path_arg)
    src = TextSource.open(path_arg)
    pr = probe_source(src)
    if pr.kind == "empty":
        src.close()
        raise UsageError(f"{path_arg} is empty: nothing to ask about")
    if pr.kind == "binary":
        src.close()
        raise UsageError(f"{path_arg} looks like a binary file (NUL bytes); rlm reads text")
    return Corpus(path_arg, [src], pr)


def _open_folder(root: Path, display: str) -> Corpus:
    from rlm.corpus.walk import walk

    res = walk(root)
    sources: list[TextSource] = []
    skipped: list[dict] = []
    for s in res.skipped:
        incomplete = s.reason.startswith("unreadable")
        skipped.append({"path": s.path, "reason": s.reason, "incomplete": incomplete})
    total_b = total_l = 0
    samples: list[str] = []
    notes: list[str] = []
    for fe in res.files:
        fp = root / fe.path
        try:
            src = TextSource(fp, display=fe.path)
            pr = probe_source(src)
        except (OSError, UsageError) as e:
            skipped.append({"path": fe.path, "reason": f"unreadable: {e}", "incomplete": True})
            continue
        if pr.kind == "empty":
            skipped.append({"path": fe.path, "reason": "empty", "incomplete": False})
            src.close()
            continue
        if pr.kind == "binary":
            skipped.append({"path": fe.path, "reason": "binary", "incomplete": False})
            src.close()
            continue
        sources.append(src)
        total_b += pr.bytes
        total_l += pr.lines
        samples.extend(pr.samples[:3])
        notes.extend(f"{fe.path}: {n}" for n in pr.notes if "trailing newline" not in n)
        if pr.longest_line > MAX_LINE_CHARS * 4:
            notes.append(f"{fe.path}: a line of {pr.longest_line:,} bytes is cut by bytes into chunks")
    if not sources:
        raise UsageError(f"{display}: no readable text files (skipped {len(skipped)})")
    probe = Probe(path=display, bytes=total_b, lines=total_l, files=len(sources),
                  kind="folder", samples=samples[:50], notes=notes)
    kinds = {classify(samples, "")}
    if kinds == {"log"}:
        probe.kind = "folder"
    return Corpus(display, sources, probe, skipped)


# ------------------------------------------------------------------------------------ helpers

def chars_per_token(model: Model, probe: Probe) -> float:
    """Measured on the probe's samples with the model's own tokenizer (or its ratio)."""
    text = "\n".join(probe.samples)[:20_000]
    if not text.strip():
        return 3.0
    n = max(1, model.count_tokens(text))
    return max(1.0, len(text) / n)


def _finding(fid: str, claim: str, src: TextSource, a: int, b: int, verified: bool,
             chunk: str | None = None, **kw) -> Finding:
    evidence = "\n".join(src.lines(a, b, max_chars=MAX_LINE_CHARS))
    return Finding(id=fid, claim=claim, evidence=evidence[:4000],
                   source=Source(path=src.display, line_start=a, line_end=b),
                   verified=verified, chunk=chunk, **kw)


# ------------------------------------------------------------------------------------ ask

async def ask_async(path: str, question: str, opts: AskOptions, model: Model | None = None,
                    on_event: Callable[[str, dict], None] | None = None,
                    handle_sigint: bool = False, interrupt: anyio.Event | None = None) -> Report:
    """`interrupt`: when set, the run stops like on Ctrl-C and reports what finished."""
    if not question.strip():
        raise UsageError("the question is empty")
    t0 = time.monotonic()
    corpus = open_corpus(path)
    own_model = model is None
    rec = report = sub = sink = None
    try:
        if model is None:
            from rlm.models.registry import resolve_model

            model = resolve_model(opts.model, opts.base_url, opts.api_key, timeout=opts.timeout)
            model = store.wrap_model(model, opts)  # call cache (rlm/store.py)
        sub = None
        if opts.sub_model:
            from rlm.models.registry import resolve_model

            sub = store.wrap_model(resolve_model(opts.sub_model, opts.base_url, opts.api_key,
                                                 timeout=opts.timeout), opts)
        # redaction wraps the cache, so the cache only ever sees redacted prompts
        policy = redact_model.decide([model, sub], opts.redact, opts.redact_report)
        model, sub = policy.wrap(model), policy.wrap(sub)
        run = _Run(corpus, question, opts, model, on_event or (lambda e, d: None), sub=sub)
        run.redaction = policy
        rec = store.record_run(run, path, question, opts)  # run record; checks opts.resume
        if rec is not None and policy.report:
            rec.mask = policy.redactor.mask_data  # --redact-report: events and report masked
        sink = on_rejected.set(lambda d: run.emit(Rejected(**d)))  # raw rejected replies
        scope = anyio.CancelScope()
        async with anyio.create_task_group() as tg:
            if handle_sigint:
                watch_sigint(run.budget, scope, tg)
            if interrupt is not None:
                watch_event(run.budget, scope, tg, interrupt)
            report = await run.execute(scope)
            tg.cancel_scope.cancel()
        report.usage.wall_s = round(time.monotonic() - t0, 3)
        if policy.report:
            report = redact_model.mask_report(report, policy)
        return report
    finally:
        if sink is not None:
            on_rejected.reset(sink)
        if rec is not None:
            rec.close(report, sys.exc_info()[1])
        corpus.close()
        if own_model and model is not None:
            await model.aclose()
        if sub is not None:
            await sub.aclose()


def ask(path: str, question: str, opts: AskOptions | None = None, **kw) -> Report:
    """Synchronous convenience wrapper around ask_async."""
    return anyio.run(lambda: ask_async(path, question, opts or AskOptions(), **kw))


class _Run:
    """State of one ask run: the budget, coverage counters, findings."""

    def __init__(self, corpus: Corpus, question: str, opts: AskOptions, model: Model,
                 emit: Callable[[str, dict], None], sub: Model | None = None):
        self.corpus, self.q, self.opts, self.model = corpus, question, opts, model
        self.sink = emit  # plain (kind, data) sinks: progress, run record
        self.sub = sub or model  # sub-calls (map, judge, merge); the main model synthesises
        self.code_only = is_code_only(model)  # the `none` tier: code finds and words the answer
        self.budget = Budget(opts.max_tokens, opts.max_calls, opts.max_wall_s)
        self.cov = Coverage(bytes_total=corpus.probe.bytes, lines_total=corpus.probe.lines,
                            skipped=corpus.skipped, declared=list(corpus.probe.notes))
        self.findings: list[Finding] = []
        self.evidence = evidence.EvidenceStats()
        self.groups: list[dict] = []
        self.answer_parts: list[str] = []
        self.model_answer: str | None = None
        self.synth_needed = False
        self.run_id = time.strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]
        self.cpt = chars_per_token(model, corpus.probe)
        self.window = max(512, int(min(model.context_tokens, self.sub.context_tokens) * opts.usable_fraction) - PROMPT_OVERHEAD_TOKENS)
        from rlm.calibrate import profile_window  # `rlm calibrate` profiles, when they exist

        cals = [c for c in (profile_window(getattr(m, "name", ""), m.context_tokens)
                            for m in ((model,) if self.sub is model else (model, self.sub))) if c]
        self.window_note = "; ".join(c[1] for c in cals) or None
        wins = [c[0] for c in cals if c[0]]
        if wins:
            ctx = min(model.context_tokens, self.sub.context_tokens)
            self.window = max(512, min(min(wins), int(ctx * 0.97)) - PROMPT_OVERHEAD_TOKENS)

    # -- plan ----------------------------------------------------------------------------------
    def est_tokens(self, nbytes: int) -> int:
        return int(nbytes / self.cpt) + 1

    async def execute(self, scope: anyio.CancelScope) -> Report:
        pr = self.corpus.probe
        force = self.opts.strategy
        if force and force not in ("direct", "grep", "profile", "fanout"):
            raise UsageError(f"unknown strategy {force!r} (direct, grep, profile, fanout)")
        dec = decide(pr, self.q, self.window, self.est_tokens(pr.bytes), force)
        multi = len(self.corpus.sources) > 1
        if dec.strategy == "direct" and multi and not dec.forced:
            dec = Decision("fanout", dec.reasons + [f"{pr.files} files: one chunk per file "
                                                    "(direct reads take one file)"], dec.anchors)
        if dec.strategy == "profile" and (multi or pr.kind != "log") and not dec.forced:
            dec = Decision("fanout", dec.reasons + ["profiles need one log file"], dec.anchors)
        if self.code_only:
            dec = by_code.adjust_decision(dec, pr, self.q, len(self.corpus.sources))
        if dec.strategy == "grep" and not dec.anchors:
            raise UsageError("--strategy grep needs anchors in the question (quoted text or ids)")
        self.decision = dec
        if self.window_note:
            dec.reasons.insert(0, self.window_note)
        self.emit(Gate(dec.strategy, dec.reasons))
        if self.code_only and dec.strategy in ("direct", "fanout"):
            self.estimate = Estimate(calls=0, prompt_tokens=0)
            if not self.opts.dry_run:
                by_code.answer_ranked(self)  # BM25 passages, found by code, not read
            return self._report()
        handler = getattr(self, f"_{dec.strategy}")
        await handler(scope)
        if self.synth_needed and not self.opts.dry_run:
            await self._synthesize()
        return self._report()

    async def _synthesize(self) -> None:
        """Fresh, clean prompt: the question plus verified findings only."""
        verified = [f for f in self.findings if f.verified]
        if not verified:
            self.answer_parts.append("No verified finding answers the question: the chunks read "
                                     "gave no claim whose evidence checked out.")
            return
        if self.budget.interrupted:
            return
        syn = await synthesize(self.model, self.q, verified, self.budget, self.window,
                               self.opts.timeout)
        if syn.cut_note:
            self.cov.declared.append(syn.cut_note)
            self.reduce.unmerged = len(verified) - syn.used
        if syn.error:
            self.answer_parts.append(f"Synthesis call failed ({syn.error}); the verified findings "
                                     "are listed below as code found them.")
        self.model_answer = syn.text

    # -- direct --------------------------------------------------------------------------------
    async def _direct(self, scope) -> None:
        src = self.corpus.sources[0]
        chunk = Chunk("c0001", src.display, 1, src.line_count, 0, src.size, "", src)
        material = chunk.numbered_text(MAX_LINE_CHARS)
        est = self.model.count_tokens(material) if src.size < 400_000 else self.est_tokens(src.size)
        self.estimate = Estimate(calls=1, prompt_tokens=est + PROMPT_OVERHEAD_TOKENS)
        self.cov.chunks_total = 1
        if self.opts.dry_run:
            return
        o = await self._one_call("direct", chunk, scope, material=material)
        if not o.ok:
            self._fail(chunk, o)
            return
        self._read(chunk)
        res = o.result
        self.model_answer = res.answer.strip()
        shown = ShownLines(chunk)
        for ln in dict.fromkeys(res.cites):  # a cite without a quote: the line must exist
            ev = self.evidence.add(evidence.verify_lines(shown, src.display, ln, ln, None,
                                                         require_quote=False))
            if ev.ok:
                self.findings.append(_finding(f"f{len(self.findings) + 1}", "cited by the answer",
                                              src, ln, ln, True, chunk.id))
        self.answer_parts.append(f"Read directly: all {src.line_count:,} lines in one call; "
                                 "no chunking or fan-out was needed.")

    async def _one_call(self, task: str, chunk: Chunk, scope, **fields: str) -> Outcome:
        """One call of the main model over one unit (direct read, grep hits), through the mapper
        so a failure becomes an outcome with its reason, like any fan-out chunk."""
        t = recipe.task("giant-file", task)
        msgs = recipe.messages("giant-file", task, question=self.q, **fields)

        async def work(_c: Chunk):
            res, _ = await call_json(self.model, msgs, recipe.schema_model("giant-file", task),
                                     Limits(max_tokens=t["max_tokens"], timeout=self.opts.timeout),
                                     self.budget, check=lambda r: echo_reason(
                                         r.answer, msgs, fields.get("material", ""), self.q))
            return res

        [o] = await map_items([chunk], work, key=lambda c: c.id, concurrency=1,
                              budget=self.budget, cancel_scope=scope)
        return o

    # -- grep ----------------------------------------------------------------------------------
    async def _grep(self, scope) -> None:
        anchors = self.decision.anchors
        hits: list[tuple[TextSource, list[int]]] = []
        scanned_b = scanned_l = 0
        truncated = False
        for src in self.corpus.sources:
            r = search(src, anchors)
            scanned_b += src.size
            scanned_l += src.line_count
            truncated |= r.truncated
            if r.hit_lines:
                hits.append((src, r.hit_lines))
        self.cov.bytes_scanned_by_code, self.cov.lines_scanned_by_code = scanned_b, scanned_l
        if truncated:
            self.cov.declared.append("grep stopped collecting after 5,000 matching lines per file")
        n_hits = sum(len(h) for _, h in hits)
        why = f"{n_hits} line(s) match " + ", ".join(repr(a) for a in anchors)
        self.decision.reasons.append(f"code search: {why} in {scanned_l:,} lines")
        if not hits:
            self.estimate = Estimate(calls=0, prompt_tokens=0)
            self.answer_parts.append(f"No line matches {', '.join(repr(a) for a in anchors)} in "
                                     f"{scanned_l:,} lines searched by code; no model call was made.")
            return
        if self.code_only:
            if not self.opts.dry_run:
                by_code.answer_grep(self, hits)
            return
        ctx = 0 if self.corpus.probe.kind == "log" else 2
        parts = []
        for src, lines in hits:
            for a, b in regions(lines, ctx, src.line_count):
                parts.append((src, a, b))
        material = "\n".join(
            (f"--- {src.display} ---\n" if len(hits) > 1 else "")
            + "\n".join(f"{a + i}| {s}" for i, s in enumerate(src.lines(a, b, 400)))
            for src, a, b in parts)
        tokens = self.model.count_tokens(material)
        if tokens <= self.window:
            self.estimate = Estimate(calls=1, prompt_tokens=tokens + PROMPT_OVERHEAD_TOKENS)
            await self._grep_one_call(scope, hits, parts, material, why)
        else:
            self.decision.reasons.append(f"the matches (~{tokens:,} tokens) do not fit one call: "
                                         "fan-out over the matching regions")
            max_bytes = int(self.window * self.cpt)

            def chunks() -> Iterator[Chunk]:
                for src, lines in hits:
                    yield from iter_chunks(src, max_bytes,
                                           line_ranges=regions(lines, ctx, src.line_count))

            await self._fanout_chunks(scope, chunks, max_bytes)

    async def _grep_one_call(self, scope, hits, parts, material: str, why: str) -> None:
        self.cov.chunks_total = 1
        if self.opts.dry_run:
            return
        pseudo = Chunk("g0001", hits[0][0].display, parts[0][1], parts[-1][2], 0, 0, "", hits[0][0])
        o = await self._one_call("grep", pseudo, scope, why=why, material=material)
        by_code.add_hit_findings(self, hits, pseudo.id)
        timeline = grep_timeline(by_code.grep_items(hits), self.decision.anchors)
        if not o.ok:  # the answer is optional wording over code's hits: say so, show code's
            self.cov.declared.append(wording_failed_note(1, 1, o.error or "failed", "answer call"))
            self.answer_parts.extend(timeline)
            return
        self.cov.chunks_ok = 1
        self.cov.lines_read_by_model = sum(b - a + 1 for _, a, b in parts)
        self.cov.bytes_read_by_model = len(material.encode())
        self.model_answer = o.result.answer.strip()
        shown = {ln for _, a, b in parts for ln in range(a, b + 1)}
        bad = [c for c in o.result.cites if c not in shown]
        if bad:
            self.cov.declared.append(f"the model cited lines that were not shown to it "
                                     f"({', '.join(map(str, bad[:5]))}); those cites were ignored")
        self.answer_parts.append(f"No fan-out was needed: {sum(len(h) for _, h in hits)} "
                                 f"candidate line(s) found by code search fit in one call.")
        self.answer_parts.extend(timeline)

    # -- profile -------------------------------------------------------------------------------
    async def _profile(self, scope) -> None:
        src = self.corpus.sources[0]
        prof = profile_log(src)
        self.cov.bytes_scanned_by_code, self.cov.lines_scanned_by_code = prof.bytes, prof.lines
        if prof.overflow:
            self.cov.declared.append("more than 200,000 distinct line shapes: rarer shapes beyond "
                                     "that were counted but not tracked")
        why_by_line: dict[int, str] = {}
        for tp in prof.templates:
            w = (f"a line shape seen {tp.count} time{'s' if tp.count != 1 else ''} in "
                 f"{prof.lines:,} lines" + (", error level" if tp.error_level else ""))
            for ln in tp.lines:
                why_by_line.setdefault(prof.record_of.get(ln, ln), w)
        groups = group_candidates(src, prof.candidates, why_by_line)
        self.decision.reasons.append(
            f"profile: {prof.templates_total:,} line shapes in {prof.lines:,} lines; "
            f"{len(prof.candidates)} candidate lines (shapes seen at most {prof.rare_max} "
            f"time{'s' if prof.rare_max != 1 else ''}, "
            f"or error level) in {len(groups)} groups")
        if self.code_only:
            self.estimate = Estimate(calls=0, prompt_tokens=0)
        else:
            est = sum(self.model.count_tokens(_numbered(g)) for g in groups)
            self.estimate = Estimate(calls=len(groups) + 1,
                                     prompt_tokens=est + PROMPT_OVERHEAD_TOKENS * (len(groups) + 1))
            self.cov.chunks_total = len(groups)
        if self.opts.dry_run or not groups:
            if not groups:
                self.answer_parts.append("Code found no rare or error-level lines.")
            return
        if self.code_only:
            self.answer_parts.append(
                f"Code profiled all {prof.lines:,} lines and found {len(prof.candidates)} "
                f"candidate lines in {len(groups)} groups; no model was used.")
            self._profile_findings(src, [Outcome(g) for g in groups], prof.record_end)
            return

        async def work(g: Group):
            self.emit(UnitStarted(g.id, src.display, g.lines[0], g.lines[-1]))
            return await judge_group(self.sub, g, self.q, self.budget, self.opts.timeout)

        self.emit(Plan(len(groups), self.opts.concurrency))
        self.answer_parts.append(
            f"No fan-out was needed: code profiled all {prof.lines:,} lines and the model read "
            f"only the {len(prof.candidates)} candidate lines, in {len(groups)} small calls.")
        outs = await map_items(groups, work, key=lambda g: g.id, concurrency=self.opts.concurrency,
                               budget=self.budget, cancel_scope=scope,
                               on_outcome=lambda o: self._done(
                                   Unit(o.item.id, src.display, o.item.lines[0], o.item.lines[-1]),
                                   o))
        self._profile_findings(src, outs, prof.record_end)

    def _profile_findings(self, src: TextSource, outs: list[Outcome],
                          record_end: dict[int, int]) -> None:
        """Code-found groups become findings. The model's label and summary are optional
        wording: a failed call is declared, never a failed chunk (code read every line)."""
        n = failed = 0
        reason = ""
        for o in outs:
            g: Group = o.item
            if o.ok and o.result is not None:
                g = o.result
                self.cov.chunks_ok += 1
                self.cov.lines_read_by_model += min(len(g.lines), 12)
                self.cov.bytes_read_by_model += sum(len(g.texts[ln][:400].encode())
                                                    for ln in g.lines[:12])
            elif not o.ok:
                g.error, failed, reason = o.error, failed + 1, reason or (o.error or "failed")
            texts = [g.texts[ln] for ln in g.lines]
            g.label, label_note = guard_label(g.label, texts, g.why)
            # code states what it knows; the model's summary is added only when usable
            claim = describe_group(g.kind, g.key, g.why, [(src.display, ln, g.texts[ln])
                                                           for ln in g.lines])
            claim += f" (model: {g.claim})" if g.claim else ""
            note = label_note or (None if g.claim or self.code_only
                                  else f"no usable model summary ({g.error or 'empty'})")
            for ln in g.lines:
                n += 1
                end = record_end.get(ln, ln)  # a stack trace stays with its header
                self.findings.append(_finding(f"f{n}", claim, src, ln, end, True, g.id,
                                              label=g.label, group=g.id, note=note))
            self.groups.append({"id": g.id, "kind": g.kind, "key": g.key, "why": g.why,
                                "label": g.label, "claim": g.claim, "lines": g.lines})
        if failed:
            self.cov.declared.append(wording_failed_note(failed, len(outs), reason))

    # -- fan-out -------------------------------------------------------------------------------
    async def _fanout(self, scope) -> None:
        max_bytes = max(256, int(self.window * self.cpt))

        def chunks() -> Iterator[Chunk]:
            for src in self.corpus.sources:
                yield from iter_chunks(src, max_bytes)

        await self._fanout_chunks(scope, chunks, max_bytes)

    async def _fanout_chunks(self, scope, make_chunks: Callable[[], Iterable[Chunk]],
                             max_bytes: int) -> None:
        """Map over the chunks make_chunks() yields (twice: once to count and estimate, once to
        run), so that even 20,000 chunks are never all in memory at once."""

        def numbered() -> Iterator[Chunk]:
            for i, c in enumerate(make_chunks(), 1):
                c.id = f"c{i:04d}"  # unique across files
                yield c

        total = cut = est_prompt = 0
        for c in numbered():
            total += 1
            cut += c.cut
            est_prompt += self.est_tokens(c.nbytes) + PROMPT_OVERHEAD_TOKENS
        if cut:
            self.cov.declared.append(f"{cut} chunks are pieces of over-long lines cut by bytes "
                                     f"(at most {max_bytes:,} bytes each)")
        self.cov.chunks_total = total
        self.estimate = Estimate(calls=total + 1, prompt_tokens=est_prompt)
        self.decision.reasons.append(f"fan-out: {total} chunks of at most "
                                     f"~{self.window:,} tokens, concurrency {self.opts.concurrency}")
        if self.opts.dry_run:
            return
        self.emit(Plan(total, self.opts.concurrency))
        t = recipe.task("giant-file", "map")
        out_model = recipe.schema_model("giant-file", "map")

        async def work(c: Chunk):
            self.emit(UnitStarted(c.id, c.path, c.line_start, c.line_end))
            msgs = recipe.messages("giant-file", "map", question=self.q, where=c.describe(),
                                   material=c.numbered_text(MAX_LINE_CHARS))
            res, _ = await call_json(self.sub, msgs, out_model,
                                     Limits(max_tokens=t["max_tokens"], timeout=self.opts.timeout),
                                     self.budget)
            return res

        raw: list[Finding] = []
        unverified: list[Finding] = []

        def done(o: Outcome) -> None:
            c: Chunk = o.item
            fs = []
            if o.ok:
                self._read(c)
                for mf in o.result.findings:
                    f = self._verify_map_finding(c, mf, len(raw) + len(unverified) + 1)
                    (raw if f.verified else unverified).append(f)
                    fs.append(f)
            else:
                self._fail(c, o)
            self._done(Unit(c.id, c.path, c.line_start, c.line_end), o, fs)

        await map_items(numbered(), work, key=lambda c: c.id, concurrency=self.opts.concurrency,
                        budget=self.budget, cancel_scope=scope, on_outcome=done, keep_results=False)
        # file order, not completion order: reduce/synthesis prompts (and the call cache) stay
        # the same from one run to the next
        for fs in (raw, unverified):
            fs.sort(key=lambda f: (int((f.chunk or "c0")[1:]), f.source.line_start))
        self.cov.chunks_failed.sort(key=lambda c: int(c.chunk[1:]))
        synth_window = self.window

        def size(fs):
            return self.model.count_tokens(render(fs))

        agg, info = await reduce_findings(
            None if self.budget.interrupted else self.sub, raw, self.q,
            fits=lambda fs: size(fs) <= synth_window, size=size, budget=self.budget,
            timeout=self.opts.timeout, log=lambda m: self.emit(ReduceNote(m)))
        self.reduce = info
        self.findings = agg + unverified
        self.synth_needed = True

    def _verify_map_finding(self, c: Chunk, mf, n: int) -> Finding:
        """Models cite, code quotes: rlm.evidence checks the quote at the cited line, within
        what this call was shown (verified, corrected or rejected, counted)."""
        ev = self.evidence.add(evidence.verify_lines(ShownLines(c), c.path, mf.line, mf.line,
                                                     mf.quote))
        return Finding(id=f"f{n}", claim=mf.claim, evidence=ev.text, chunk=c.id,
                       verified=ev.ok, note=ev.reason or None,
                       source=Source(path=c.path, line_start=ev.line_start or mf.line,
                                     line_end=ev.line_end or mf.line))

    # -- bookkeeping ---------------------------------------------------------------------------
    def _read(self, c: Chunk) -> None:
        self.cov.chunks_ok += 1
        self.cov.lines_read_by_model += 0 if c.cut and c.byte_start > c.source.offsets[c.line_start - 1] \
            else c.line_end - c.line_start + 1
        self.cov.bytes_read_by_model += c.nbytes

    def _fail(self, c: Chunk | Unit, o: Outcome) -> None:
        unit = c if isinstance(c, Unit) else Unit(c.id, c.path, c.line_start, c.line_end)
        self.cov.chunks_failed.append(ledger.failed_unit(unit, o.status, o.reason))

    def emit(self, ev) -> None:
        self.sink(ev.kind, ev.as_dict())

    def _done(self, unit: Unit, o: Outcome, findings: list | None = None) -> None:
        self.emit(UnitDone.of(unit, o.status, o.reason, self.budget.usage, findings))

    # -- report --------------------------------------------------------------------------------
    def _report(self) -> Report:
        pr = self.corpus.probe
        strategy = self.decision.strategy
        speed = getattr(self.model, "speed", None)
        if speed and self.estimate.calls:
            # completion: assume a third of each call's max_tokens, as measured on the recipes
            self.estimate.seconds = round(self.estimate.prompt_tokens / speed[0]
                                          + self.estimate.calls * 80 / speed[1], 1)
        rep = Report(command=self.opts.command, question=self.q,
                     corpus=CorpusInfo(**pr.as_corpus()), strategy=strategy,
                     gate=GateInfo(reasons=self.decision.reasons, estimate=self.estimate),
                     model=getattr(self.model, "name", ""), tier=profile_of(self.model).tier,
                     run_id=self.run_id,
                     dry_run=self.opts.dry_run)
        if hasattr(self, "reduce"):
            rep.reduce = self.reduce
        u = self.budget.usage
        rep.usage = UsageInfo(calls=u.calls, prompt_tokens=u.prompt_tokens,
                              completion_tokens=u.completion_tokens, cached_calls=u.cached_calls,
                              endpoints=endpoint_usage(self.model, self.sub))
        rep.findings = self.findings
        rep.groups = self.groups
        rep.evidence = EvidenceCounts(**self.evidence.as_dict())
        if self.opts.dry_run:
            redact_model.declare(getattr(self, "redaction", None), rep, [])  # what a run would do
            rep.answer = "Dry run: probe, gate and estimate only; no model call was made."
            rep.coverage = ledger.close(self.cov, [], dry_run=True)
            return rep
        self.cov.interrupted = self.budget.interrupted
        redact_model.declare(getattr(self, "redaction", None), rep, self.cov.declared)
        if self.code_only:
            self.answer_parts.insert(0, NO_MODEL_NOTICE)
            by_code.finish_coverage(self.cov, strategy, self.budget.interrupted_by)
        else:
            ledger.close(self.cov, ledger.read_account(self.cov, strategy, u.calls),
                         interrupted_by=self.budget.interrupted_by)
        rep.coverage = self.cov
        # synthesis happens in compose (async); here we only render what exists
        rep.answer = self._compose_answer(rep)
        return rep

    def _compose_answer(self, rep: Report) -> str:
        from rlm.render import answer_markdown

        return answer_markdown(rep, self.model_answer, self.answer_parts)


def _numbered(g: Group) -> str:
    from rlm.engine.candidates import numbered

    return numbered(g)


# ------------------------------------------------------------------------------------ repos

def audit(repo: str, opts=None, **kw):
    """`rlm audit` as a library call (see rlm.audit)."""
    from rlm.audit import audit as _audit

    return _audit(repo, opts, **kw)


def mine(repo: str, questions: list[str], opts=None, **kw):
    """`rlm mine` as a library call (see rlm.mine)."""
    from rlm.mine import mine as _mine

    return _mine(repo, questions, opts, **kw)
