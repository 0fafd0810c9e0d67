"""Candidate lines found by code (rare templates, error levels, grep hits) become findings.

Code groups candidates first by shared identifiers (one session id across five distant lines
is one story), then by template. The model is asked one small, bounded question per group
(a label and a claim of at most 25 words); evidence always comes from the file, via code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rlm.corpus import instructions
from rlm.prompts import recipe
from rlm.corpus.lines import number_pairs
from rlm.corpus.source import TextSource
from rlm.engine.budget import Budget
from rlm.engine.call import call_json
from rlm.models.base import Limits, Model
from rlm.schemas.calls import _not_degenerate

_TIMESTAMP = re.compile(r"^\[?\d{4}-\d{2}-\d{2}[T ]?\d{2}:\d{2}|^\d{1,2}:\d{2}(:\d{2})?")
_ID = re.compile(r"(?<![\w.-])(?=[\w-]*[A-Za-z])(?=[\w-]*\d)[A-Za-z0-9][\w-]{3,}(?![\w-])")
_KEYED = re.compile(r"\b(?:user|uid|sess\w*|session\w*|trace\w*|txn\w*|request_id|req_id|"
                    r"account|actor|client|ip)=([^\s,;]+)", re.I)
_MASK = re.compile(r"[A-Za-z0-9_.:+-]*[0-9][A-Za-z0-9_.:+-]*|\b[0-9a-fA-F]{8,}\b")
MAX_GROUP_LINES = 12


_DATEISH = re.compile(r"^\d{4}-\d{2}-\d{2}|^\d{1,2}:\d{2}|^T?\d{2}:\d{2}")


def identifiers(line: str) -> set[str]:
    """Ids a person would follow across lines (session, txn, user...), not timestamps."""
    line = _LEAD_TS.sub("", line)
    ids = {m.group(1) for m in _KEYED.finditer(line)}
    for m in _ID.finditer(line):
        tok = m.group(0)
        if not _TIMESTAMP.match(tok) and not _DATEISH.match(tok):
            ids.add(tok)
    return ids


_KV = re.compile(r"=([^\s,;]+)")


def template_of(line: str) -> str:
    """Shape for grouping: digits masked (as the profiler does) and key=value values too, so
    `value=true actor=ops` and `value=1 actor=bot-2` are one kind of line."""
    return _KV.sub("=#", _MASK.sub("#", line))


@dataclass
class Group:
    id: str
    kind: str  # "identifier" | "template"
    key: str  # the shared identifier, or the template text
    lines: list[int]
    why: str
    label: str | None = None
    claim: str | None = None
    error: str | None = None
    texts: dict[int, str] = field(default_factory=dict)


def group_candidates(src: TextSource, lines: list[int], why_by_line: dict[int, str],
                     max_id_fanout: int = 50,
                     ids_of: dict[int, set[str]] | None = None) -> list[Group]:
    """Union lines sharing an identifier; the rest group by template. Deterministic order.
    `ids_of`: each line's real identifiers (rlm.corpus.stories.story_ids); without it, every
    token that looks like an id counts."""
    texts = {ln: src.line(ln, max_chars=2000) for ln in lines}

    def ids(ln: int) -> set[str]:
        return identifiers(texts[ln]) if ids_of is None else ids_of.get(ln, set())

    by_id: dict[str, list[int]] = {}
    for ln in lines:
        for ident in ids(ln):
            by_id.setdefault(ident, []).append(ln)
    parent = {ln: ln for ln in lines}

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    shared: dict[int, set[str]] = {}
    for ident, lns in by_id.items():
        if 2 <= len(lns) <= max_id_fanout:
            for ln in lns[1:]:
                parent[find(ln)] = find(lns[0])
    comps: dict[int, list[int]] = {}
    for ln in lines:
        comps.setdefault(find(ln), []).append(ln)
    groups: list[Group] = []
    loose: dict[str, list[int]] = {}
    for members in comps.values():
        if len(members) >= 2:
            common = set.intersection(*(ids(m) for m in members))
            key = sorted(common, key=len, reverse=True)[0] if common else ""
            # a component whose lines all share one template is a template group, not a story;
            # nor is a chain of lines with no one identifier in common (no placeholder names)
            if not common or len({template_of(texts[m]) for m in members}) == 1:
                for m in members:
                    loose.setdefault(template_of(texts[m]), []).append(m)
                continue
            groups.append(Group("", "identifier", key, sorted(members),
                                f"{len(members)} lines far apart share the identifier {key}"))
            shared[members[0]] = common
        else:
            loose.setdefault(template_of(texts[members[0]]), []).extend(members)
    for tpl, members in loose.items():
        members.sort()
        whys = list(dict.fromkeys(why_by_line.get(m, "") for m in members))
        why = whys[0]
        if len(members) > 1 and (len(whys) > 1 or " 1 time " in why):
            why = f"{len(members)} similar lines, each of a rare shape ({'; '.join(whys[:2])})"
        groups.append(Group("", "template", tpl, members, why))
    groups.sort(key=lambda g: g.lines[0])
    for i, g in enumerate(groups, 1):
        g.id = f"g{i:03d}"
        g.texts = {ln: texts[ln] for ln in g.lines}
    return groups


_LEAD_TS = re.compile(r"^\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}\S*\]?\s+")


def numbered(group: Group, limit: int = MAX_GROUP_LINES, max_chars: int = 400) -> str:
    """The group's lines for the model, timestamps dropped: a small model copies what it sees,
    and a copied message reads better as a claim than a copied timestamp. A line that reads like
    an instruction to a model is withheld (rlm.corpus.instructions); code still reports it."""
    shown = group.lines[:limit]
    out = [number_pairs(((ln, instructions.WITHHELD
                          if instructions.why_instruction(group.texts[ln])
                          else _LEAD_TS.sub("", group.texts[ln])) for ln in shown),
                        max_chars=max_chars)[0]]
    if len(group.lines) > limit:
        out.append(f"(and {len(group.lines) - limit} more lines of the same kind)")
    return "\n".join(out)


def withheld(group: Group, limit: int = MAX_GROUP_LINES) -> list[tuple[int, str]]:
    """(line, why) of the lines `numbered` withholds from the model."""
    return [(ln, why) for ln in group.lines[:limit]
            if (why := instructions.why_instruction(group.texts[ln]))]


async def judge_group(model: Model, group: Group, question: str, budget: Budget,
                      timeout: float) -> Group:
    """One bounded call: label + short claim for the group. Raises on failure (caller records)."""
    t = recipe.task("giant-file", "judge_group")
    out_model = recipe.schema_model("giant-file", "judge_group")
    msgs = recipe.messages("giant-file", "judge_group", question=question, why=group.why,
                           material=numbered(group))
    res, _ = await call_json(model, msgs, out_model,
                             Limits(max_tokens=t["max_tokens"], timeout=timeout), budget)
    group.label = res.label
    try:
        summary = _not_degenerate(res.summary) if res.summary.strip() else None
        if summary and _copied(summary, t["system"] + " " + group.why):
            raise ValueError("it repeats the instructions")
        group.claim = summary
    except ValueError as e:
        group.claim, group.error = None, f"summary dropped: {e}"
    return group


def _copied(text: str, source: str, run: int = 4) -> bool:
    """True when `text` contains `run` consecutive words of `source` (a parroted prompt)."""
    words = re.findall(r"\w+", text.lower())
    src = " " + " ".join(re.findall(r"\w+", source.lower())) + " "
    return any(" " + " ".join(words[i:i + run]) + " " in src for i in range(len(words) - run + 1))


_LEVEL = re.compile(r"^(TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|FATAL|CRITICAL)\s+")


def message_of(line: str, width: int = 90) -> str:
    """A log line without its timestamp and level: what the line says."""
    m = _LEVEL.sub("", _LEAD_TS.sub("", line).strip())
    return m if len(m) <= width else m[:width] + "…"


def code_claim(group: Group) -> str:
    """The claim code can state without a model: why the lines were picked and what they say."""
    msgs = [message_of(group.texts[ln], 70) for ln in group.lines]
    if group.kind == "identifier":
        return f"{len(msgs)} lines far apart share {group.key}, in order: " + " → ".join(msgs[:8])
    return f"{group.why}: {msgs[0]}"
