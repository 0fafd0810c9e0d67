"""Scaffolding shared by the repository recipes (rlm.audit, rlm.mine).

- :class:`RepoCorpus`: the walked repository (``rlm.corpus.walk``), its files' lines, and the
  file coverage partition (read by the model / scanned by code / failed / skipped, adding up
  to the walker's file count).
- Candidate lines: code selects lines, shows them numbered ``[n]``; the model picks numbers;
  code maps a number back to ``path:line`` and takes the quote from the file
  (:func:`render_candidates`, :func:`check_pick`).
- :func:`call_task`: one isolated, validated sub-call of a recipe task (prompts in
  ``recipes/*.toml``, schemas in :mod:`rlm.schemas_repo`).
- :func:`with_model`: resolve the model, install the Ctrl-C handler, close the model.
"""

from __future__ import annotations

import re
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Awaitable, Callable, Iterable, Sequence

import anyio

from rlm import evidence, recipe, redact_model, schemas_repo, store
from rlm.corpus.walk import WalkResult, walk
from rlm.engine.budget import Budget, watch_sigint
from rlm.engine.call import call_json
from rlm.errors import UsageError
from rlm.corpus.lines import MAX_LINE_CHARS, merge_ranges, show_line
from rlm.run.window import est_tokens, window_chars  # noqa: F401 - used by audit and mine
from rlm.evidence import EvidenceCheck
from rlm.models.base import Limits, Model
from rlm.repo_chunks import doc_lines, file_lines, is_doc_file
from rlm.schemas import CorpusInfo
from rlm.schemas_repo import FileCoverage

def new_run_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]


# ------------------------------------------------------------------------------ the corpus


class RepoCorpus:
    """A repository as the walker lists it, with lazy, cached access to its files' lines."""

    def __init__(self, path_arg: str):
        p = Path(path_arg)
        if not p.exists():
            raise UsageError(f"{path_arg}: no such folder")
        if not p.is_dir():
            raise UsageError(f"{path_arg}: not a folder (audit and mine take a repository folder)")
        self.display = path_arg
        self.root = p.resolve()
        self.walk: WalkResult = walk(self.root)
        self.files = list(self.walk.files)
        self.by_path = {f.path: f for f in self.files}
        self.unreadable: dict[str, str] = {}
        self._doc_lines: dict[str, set[int]] = {}
        if not self.files:
            raise UsageError(f"{path_arg}: no readable files (the walker listed "
                             f"{self.walk.listed_files}, skipped {self.walk.skipped_files})")

    def lines(self, rel: str) -> tuple[str, ...]:
        try:
            return file_lines(self.root, rel)
        except (OSError, ValueError) as e:  # vanished or unreadable since the walk
            self.unreadable.setdefault(rel, f"unreadable: {getattr(e, 'strerror', None) or e}")
            return ()

    def is_empty(self, rel: str) -> bool:
        return not self.lines(rel)

    def doc_lines(self, rel: str) -> set[int]:
        if rel not in self._doc_lines:
            self._doc_lines[rel] = doc_lines(rel, self.lines(rel))
        return self._doc_lines[rel]

    def basis(self, rel: str, a: int, b: int) -> str:
        """"docs" when the lines are documentation (a doc file, comments, docstrings)."""
        if is_doc_file(rel):
            return "docs"
        dl = self.doc_lines(rel)
        ls = self.lines(rel)
        rng = [n for n in range(a, b + 1) if n <= len(ls) and ls[n - 1].strip()]
        if rng and all(n in dl for n in rng):
            return "docs"
        return "code"

    def corpus_info(self) -> CorpusInfo:
        return CorpusInfo(path=self.display, bytes=self.walk.total_bytes,
                          lines=self.walk.total_lines, files=len(self.files), kind="repository")

    def file_coverage(self, read: set[str], failed: set[str]) -> FileCoverage:
        """Partition every listed file: read / scanned only / failed / skipped (with reason)."""
        fc = FileCoverage(total=self.walk.listed_files, method=self.walk.method,
                          ignored_by_gitignore=self.walk.ignored_count)
        by_reason = dict(self.walk.skipped_by_reason())
        skipped_files = [{"path": s.path, "reason": s.reason, "files": s.files,
                          "incomplete": s.reason.startswith("unreadable")}
                         for s in self.walk.skipped]
        for f in self.files:
            if f.path in self.unreadable and f.path not in read:
                reason = self.unreadable[f.path]
                kind = reason.split(":", 1)[0]
                by_reason[kind] = by_reason.get(kind, 0) + 1
                skipped_files.append({"path": f.path, "reason": reason, "files": 1,
                                      "incomplete": True})
            elif not self.lines(f.path):
                by_reason["empty"] = by_reason.get("empty", 0) + 1
                skipped_files.append({"path": f.path, "reason": "empty: nothing to read", "files": 1,
                                      "incomplete": False})
            elif f.path in read:
                fc.read_by_model += 1
            elif f.path in failed:
                fc.failed += 1
                fc.failed_files.append(f.path)
            else:
                fc.scanned_by_code += 1
                fc.scanned_only.append(f.path)
        fc.skipped = sum(by_reason.values())
        fc.skipped_by_reason = dict(sorted(by_reason.items()))
        fc.skipped_files = sorted(skipped_files, key=lambda x: x["path"])
        fc.adds_up = fc.read_by_model + fc.scanned_by_code + fc.failed + fc.skipped == fc.total
        return fc


def files_statement(fc: FileCoverage) -> str:
    why = ", ".join(f"{k} {v}" for k, v in fc.skipped_by_reason.items())
    s = (f"Files: {fc.total} listed by the walker ({fc.method}) = {fc.read_by_model} read by the "
         f"model + {fc.scanned_by_code} only scanned by code + {fc.failed} failed + "
         f"{fc.skipped} skipped" + (f" ({why})" if why else "") + ".")
    if not fc.adds_up:
        s += " (The counts do NOT add up: a bug, please report it.)"
    if fc.ignored_by_gitignore:
        s += f" {fc.ignored_by_gitignore} more files are ignored by .gitignore and not listed."
    return s


# ------------------------------------------------------------------------------ candidates


@dataclass
class Candidate:
    """A line code selected for the model to judge."""

    path: str
    line: int
    text: str
    why: str = ""
    severity: str | None = None


def render_candidates(cands: Sequence[Candidate], start: int = 1) -> tuple[str, dict[int, Candidate]]:
    """``== path ==`` headers and ``[n] text`` lines (a ``…`` row marks a gap within a file).
    Returns the text and the map number → candidate."""
    out: list[str] = []
    mapping: dict[int, Candidate] = {}
    prev: Candidate | None = None
    n = start
    for c in cands:
        if prev is None or c.path != prev.path:
            out.append(f"== {c.path} ==")
        elif c.line != prev.line + 1:
            out.append("    …")
        text, _ = show_line(c.text)
        out.append(f"[{n}] {text}".rstrip())
        mapping[n] = c
        prev = c
        n += 1
    return "\n".join(out), mapping


def candidate_cost(c: Candidate) -> int:
    return min(len(c.text), MAX_LINE_CHARS) + 8


def pack_candidates(cands: Sequence[Candidate], max_chars: int, max_lines: int = 10_000) -> list[list[Candidate]]:
    """Split an ordered candidate list into groups fitting max_chars (headers included)."""
    groups: list[list[Candidate]] = []
    cur: list[Candidate] = []
    cost = 0
    for c in cands:
        k = candidate_cost(c) + (len(c.path) + 8 if not cur or cur[-1].path != c.path else 0)
        if cur and (cost + k > max_chars or len(cur) >= max_lines):
            groups.append(cur)
            cur, cost = [], 0
            k = candidate_cost(c) + len(c.path) + 8
        cur.append(c)
        cost += k
    if cur:
        groups.append(cur)
    return groups


def check_pick(corpus: RepoCorpus, mapping: dict[int, Candidate], n: int,
               model_quote: str = "") -> tuple[Candidate | None, EvidenceCheck]:
    """Models cite, code quotes: the picked number must be one that was shown; the quote is the
    line's text from the file (or the model's optional quote, which must then be there)."""
    c = mapping.get(n)
    if c is None:
        shown = f"{min(mapping)}-{max(mapping)}" if mapping else "none"
        return None, EvidenceCheck("rejected", f"[{n}]", 0, 0, "",
                                   f"picked number {n}, which was not shown (shown: {shown})")
    ls = corpus.lines(c.path)
    quote = model_quote.strip() or (ls[c.line - 1] if 0 < c.line <= len(ls) else "")
    if not quote.strip():
        quote = ""
    ev = evidence.check(corpus.root, f"{c.path}:{c.line}", quote,
                        require_quote=bool(model_quote.strip()))
    return c, ev


# ------------------------------------------------------------------------------ words

STOPWORDS = frozenset("""
a an and any are as at be been being but by can could did do does doing done each every for from
get gets got had has have how if in into is it its itself just may might more most much must my
no not of on once one only or other our out over own per same should so some such than that the
their them then there these they this those through to too under until up upon use used uses
using very was we were what when where which while who whom whose why will with within without
would you your yes happen happens happened kind way ways thing things whether also about after
before between both does doesn there's what's it's let lets make makes made long last many times
""".split())


def words(text: str, min_len: int = 3) -> list[str]:
    """Lower-case content words of a text (identifiers split on _ and camelCase too)."""
    out: list[str] = []
    for tok in re.findall(r"[A-Za-z][A-Za-z0-9_]*", text):
        parts = [tok] + re.split(r"_+|(?<=[a-z0-9])(?=[A-Z])", tok)
        for p in parts:
            w = p.lower()
            if len(w) >= min_len and w not in STOPWORDS and w not in out:
                out.append(w)
    return out


# ------------------------------------------------------------------------------ weak models


def is_weak_model(model) -> bool:
    """The embedded model (SmolLM2-135M) cannot cite or judge reliably."""
    return str(getattr(model, "name", "")).startswith("local")


def repetitive(text: str) -> bool:
    """Degenerate output of a weak model: one word (or word part) over and over."""
    parts = [w.lower() for w in re.findall(r"[A-Za-z0-9]{3,}", text)]
    return bool(parts) and max(parts.count(w) for w in parts) > 3


def sane_claim(claim: str, line: str) -> bool:
    """A weak model's claim is kept only when it is a few words that mention the line."""
    words_c = re.findall(r"[A-Za-z0-9_]{3,}", claim)
    if len(claim.strip()) < 8 or not words_c or repetitive(claim):
        return False
    low = line.lower()
    return any(w.lower() in low for w in words_c)


# ------------------------------------------------------------------------------ calls


def task_limits(recipe_name: str, task: str, timeout: float) -> Limits:
    t = recipe.task(recipe_name, task)
    return Limits(max_tokens=int(t.get("max_tokens", 400)), timeout=timeout)


async def call_task(model: Model, recipe_name: str, task: str, budget: Budget, timeout: float,
                    **fields: str):
    """One isolated sub-call: the recipe's messages (constant part first, material last),
    validated against the task's schema from rlm.schemas_repo."""
    t = recipe.task(recipe_name, task)
    out = getattr(schemas_repo, t["schema"])
    msgs = recipe.messages(recipe_name, task, **fields)
    res, _usage = await call_json(model, msgs, out, task_limits(recipe_name, task, timeout), budget)
    return res


async def with_model(opts, fn: Callable[[Model, anyio.CancelScope, Budget], Awaitable],
                     model: Model | None, handle_sigint: bool, budget: Budget):
    """Resolve the model (unless given), run fn(model, scope, budget), close what we opened."""
    own = model is None
    if model is None:
        from rlm.models.registry import resolve_model

        model = resolve_model(opts.model, opts.base_url, opts.api_key, timeout=opts.timeout)
        model = store.wrap_model(model, opts)  # the same call cache as `ask`
    policy = redact_model.decide([model], getattr(opts, "redact", None))
    model = policy.wrap(model)  # outside the cache: the cache sees redacted prompts only
    try:
        scope = anyio.CancelScope()
        async with anyio.create_task_group() as tg:
            if handle_sigint:
                watch_sigint(budget, scope, tg)
            result = await fn(model, scope, budget)
            tg.cancel_scope.cancel()
        redact_model.declare_in_statement(policy, result)
        return result
    finally:
        if own:
            await model.aclose()


@dataclass
class ReadTracker:
    """Which lines of which files the model was shown in successful calls."""

    ranges: dict[str, list[tuple[int, int]]] = field(default_factory=dict)

    def add(self, path: str, a: int, b: int) -> None:
        self.ranges.setdefault(path, []).append((a, b))

    def lines(self, path: str) -> int:
        return sum(b - a + 1 for a, b in merge_ranges(self.ranges.get(path, [])))

    def total_lines(self) -> int:
        return sum(self.lines(p) for p in self.ranges)

    def total_bytes(self, corpus: RepoCorpus) -> int:
        n = 0
        for p, rs in self.ranges.items():
            ls = corpus.lines(p)
            for a, b in merge_ranges(rs):
                n += sum(len(ls[i - 1].encode("utf-8", "replace")) + 1
                         for i in range(a, min(b, len(ls)) + 1))
        return n

    def covers(self, path: str, n_lines: int) -> bool:
        m = merge_ranges(self.ranges.get(path, []))
        return bool(m) and m[0][0] <= 1 and m[0][1] >= n_lines
