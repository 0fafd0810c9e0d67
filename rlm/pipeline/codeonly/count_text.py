"""The words of a counting answer (rlm.pipeline.strategies.counting): the number and what was counted,
the templates or groups behind it with exact counts, how much of it is shown, and the JSON
`matched` record that carries every matching line number."""

from __future__ import annotations

import re

TOP = 10  # rows a table shows; the rest are summed in one row and declared
TIE_NAMED = 8  # leaders a tie names in the first sentence; the count says how many tie
JSON_ROWS = 10_000  # template or group rows the JSON carries (the rest are declared)
_MONTH_DAY = ("Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec|Mon|Tue|Wed|Thu|Fri|Sat|Sun|"
              "Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday")
# leading header variables: <*>, '-', a month or day name (never a word such as `Can`)
_LEAD = re.compile(rf"^(?:(?:<\*>|-|(?:{_MONTH_DAY})|\[[^\]]*<\*>[^\]]*\])[\s,]+)+")


def _n(k: int, word: str) -> str:
    return f"{k:,} {word}{'' if k == 1 else 's'}"


def shown(template: str, width: int = 110) -> str:
    """A template as the answer writes it: the leading header variables dropped, capped."""
    t = _LEAD.sub("", template).strip() or template.strip()
    t = t.replace("`", "'")
    return t if len(t) <= width else t[: width - 1] + "…"


def _ref(src, ln: int) -> str:
    return f"{src.display}:{ln}"


def _scope(q, tally) -> str:
    return (f"counted by code over {tally.scanned:,} lines, {q.scope(tally.files)}; no model "
            "read or counted anything")


def _table(label: str, rows: list[tuple[str, list]], total: int, noun: str,
           nameless: list | None = None) -> list[str]:
    """rows: (value, (lines, source, first line)), most first; `nameless`: the lines that name
    no value, a row of its own after the values (never folded into "more"); `total`: the lines
    of the value rows."""
    out = [f"| {label} | lines | first line |", "|---|---:|---|"]
    for k, (c, src, ln) in rows[:TOP]:
        cell = k.replace("|", "\\|")[:120]
        out.append(f"| `{cell}` | {c:,} | {_ref(src, ln)} |")
    rest = sum(c for _, (c, _, _) in rows[TOP:])
    if len(rows) > TOP:
        out.append(f"| ({len(rows) - TOP:,} more {noun}s) | {rest:,} | |")
    if nameless:
        out.append(f"| (no {label}) | {nameless[0]:,} | {_ref(nameless[1], nameless[2])} |")
    if len(rows) > TOP:
        out.append("")
        out.append(f"{TOP} of {_n(len(rows), noun)} shown; the other {len(rows) - TOP:,} hold "
                   f"{rest:,} of the {total:,} lines (all of them are in the JSON report).")
    return out


NONE = "(none)"  # the group of lines that do not hold the slot: never the leader


def _ranked(table: dict) -> list[tuple[str, list]]:
    return sorted(table.items(), key=lambda kv: (kv[0] == NONE, -kv[1][0], kv[1][2]))


def _what(q, concepts: list[str], kinds: list, tally=None) -> str:
    if not concepts:
        return q.predicate_words()
    if len(kinds) == 1:
        return f"lines of the template `{shown(kinds[0][0])}`" + q.conditions(also=True)
    held = " + ".join(f"`{c}`" for c in concepts)
    how = getattr(tally, "how", "")
    if how == "phrase":
        held = f"the words `{tally.said}` together"
    elif how == "words":
        held += f" (as the whole word{'s' if ' ' in tally.said else ''} " + ", ".join(
            f"`{w}`" for w in tally.said.split()) + ")"
    where = f"in {len(kinds)} templates" if kinds else "of the templates"
    return f"lines {where} holding {held}" + q.conditions(also=True)


def answer(q, concepts: list[str], tally) -> str:
    kinds = _ranked(tally.kinds)
    what = _what(q, concepts, kinds, tally)
    if tally.total == 1:  # "1 line mentioning", not "1 lines"
        what = re.sub(r"\blines\b", "line", what, count=1)
    out: list[str] = []
    if q.group_by and tally.total:
        out += _over(q, what, tally) if q.over else _grouped(q, what, tally)
    else:
        out.append(f"**{tally.total:,}** {what} ({_scope(q, tally)}).")
    if len(kinds) > 1:
        out += ["", *_table("template", [(shown(k), v) for k, v in kinds], tally.total,
                            "template")]
    if tally.related:
        out += ["", related(tally.related)]
    if getattr(tally, "apart", None):
        out += ["", apart_words(tally.apart, tally.how)]
    out += ["", holds(q, tally, len(kinds))]
    return "\n".join(out)


def _not_counted(rows: list, why: str, ask: str) -> str:
    """Templates named with their lines, not counted: the three largest, then how many more."""
    by: dict[str, list] = {}
    for s, src in rows:
        g = by.setdefault(shown(s.row.text, 80), [0, src, s.row.first_line])
        g[0] += s.row.count
    ranked = sorted(by.items(), key=lambda kv: -kv[1][0])
    n = sum(c for c, _, _ in by.values())
    names = "; ".join(f"`{k}` ({c:,}, first at {_ref(src, ln)})" for k, (c, src, ln) in ranked[:3])
    more = f"; and {len(ranked) - 3:,} more" if len(ranked) > 3 else ""
    return (f"Not counted: {_n(n, 'line')} of {_n(len(ranked), 'template')} that {why}: "
            f"{names}{more}. {ask}")


def apart_words(rows: list, how: str) -> str:
    """Templates that hold the question's words only loosely (apart, or inside longer words)
    while others hold them as it wrote them."""
    loose = "apart or inside other words" if how == "phrase" else "only inside other words"
    return _not_counted(rows, f"hold the question's words {loose}",
                        "Ask with their words to count them.")


def shadowed(rows: list, concepts: list[str], total: int) -> str:
    """The lines counted hold the question's words only apart, and many more lines hold all of
    them but one: which the question means, code cannot tell."""
    missing = {c for s, _ in rows for c in concepts if c not in s.held}
    but = f"`{missing.pop()}`" if len(missing) == 1 else "one"
    held = " + ".join(f"`{c}`" for c in concepts)
    return (f"Not sure: the {_n(total, 'line')} counted below hold {held}, but not as the "
            f"question writes them together. " + _not_counted(
                rows, f"hold all of them but {but}",
                "If those are what you mean, ask with their words."))


def levels_rare(level: str, with_level: int, sampled: int, total: int) -> str:
    """A level count in a log that writes no level on most lines."""
    word = "error" if level == "error" else "warning"
    return (f"Not sure: this log writes a level on {with_level:,} of the {sampled:,} lines code "
            f"sampled across it, so the {_n(total, word + '-level line')} counted below are "
            f"only those that write one; lines that report {word}s in their own words are not "
            f"counted. Quote the word to count the lines that hold it: how many lines "
            f"mention \"{word}\"?")


def related(rel: list) -> str:
    """Templates that hold the question's meaning only through a synonym."""
    return _not_counted(rel, "match only by a synonym of the question's words",
                        "Ask with those words to count them.")


def _grouped(q, what: str, tally) -> list[str]:
    groups = _ranked(tally.groups)
    top_c = groups[0][1][0]
    leaders = [k for k, (c, _, _) in groups if c == top_c and k != NONE]
    if not leaders:
        return [f"None of the **{tally.total:,}** {what} names a {q.group_by} "
                f"({_scope(q, tally)}): code cannot group them by it."]
    nameless = tally.groups.get(NONE, [0])[0]
    no_slot = (f" {_n(nameless, 'line')} of them name no {q.group_by}." if nameless else "")
    named = [g for g in groups if g[0] != NONE]
    head = [_leaders(leaders, q.group_by, top_c, f"of the **{tally.total:,}** {what} "
                     f"({_scope(q, tally)})") + no_slot] if q.kind == "top" else [
        f"**{tally.total:,}** {what} ({_scope(q, tally)}), in "
        f"{_n(len(named), q.group_by + ' value')}.{no_slot}"]
    return head + ["", *_table(q.group_by, named, tally.total - nameless,
                               f"{q.group_by} value", tally.groups.get(NONE))]


def passing(q, tally) -> list[tuple[str, list]]:
    """The groups whose count passes the question's threshold (`more than 10`), most first."""
    op, n = q.over
    return [(k, v) for k, v in _ranked(tally.groups)
            if k != NONE and (v[0] > n if op == ">" else v[0] >= n)]


def _over(q, what: str, tally) -> list[str]:
    """"**6** ip values had more than 10 of the **520** lines ...", each with its count."""
    op, n = q.over
    groups, named = passing(q, tally), len(tally.groups) - (NONE in tally.groups)
    words = f"{'more than' if op == '>' else 'at least'} {n:,}"
    of = f"of the **{tally.total:,}** {what} ({_scope(q, tally)})"
    if not groups:
        return [f"No {q.group_by} value had {words} {of}; the most any had is "
                f"{max((c for k, (c, _, _) in tally.groups.items() if k != NONE), default=0):,} "
                f"({_n(named, q.group_by + ' value')} in all)."]
    names = ", ".join(f"**{k}** ({c:,})" for k, (c, _, _) in groups[:TIE_NAMED])
    more = f" and {len(groups) - TIE_NAMED:,} more (in the table)" if len(groups) > TIE_NAMED else ""
    head = (f"**{len(groups):,}** of {_n(named, q.group_by + ' value')} had {words} {of}: "
            f"{names}{more}.")
    return [head, "", *_table(q.group_by, groups, sum(c for _, (c, _, _) in groups),
                              f"{q.group_by} value")]


def _leaders(leaders: list[str], slot: str, count: int, of: str) -> str:
    """Who had the most; a tie says how many tie and names each of them up to TIE_NAMED (the
    rest are in the table and the JSON report): never a silent cut."""
    if len(leaders) == 1:
        return f"**{leaders[0]}** had the most: **{count:,}** {of}."
    named = [f"**{k}**" for k in leaders[:TIE_NAMED]]
    rest = len(leaders) - len(named)
    names = (", ".join(named[:-1]) + " and " + named[-1]) if not rest else (
        ", ".join(named) + f" and {rest:,} more (all in the table's order in the JSON report)")
    return f"{len(leaders):,} {slot} values tie for the most, **{count:,}** each {of}: {names}."


def holds(q, tally, n_kinds: int) -> str:
    parts = [_n(tally.total, "line")]
    if n_kinds > 1:
        parts.append(f"in {_n(n_kinds, 'template')}")
    if q.group_by:
        nameless = tally.groups.get(NONE, [0])[0]
        parts.append(f"in {_n(len(tally.groups) - (NONE in tally.groups), q.group_by + ' value')}"
                     + (f" ({_n(nameless, 'line')} naming none)" if nameless else ""))
    cited = min(len(tally.groups), TOP) if q.group_by else len(tally.examples)
    return (f"The answer holds {' '.join(parts)}; {cited} of the {tally.total:,} lines are "
            "cited below (the first of each group, or the first lines); every matching line "
            "number is in the JSON report (`matched.lines`).")


def mixed(components: list[str]) -> str:
    names = ", ".join(f"`{c.rstrip(':')}`" for c in components[:5])
    return (f"Not sure: the matching templates are written by different components ({names}), "
            "so they may be different events, or one happening logged by each. Each template is "
            "counted above; the total mixes them. Quote the words of the one you mean to count "
            "it alone.")


def unmatched(q, concepts: list[str], nearest: list) -> str:
    if not concepts:
        return ("Code could not tell what to count: the question names no words, anchors or "
                "level to match. Not answered; no number is given.")
    want = " + ".join(f"`{c}`" for c in concepts)
    out = [f"Code could not map the question to the log's templates: no template holds all "
           f"of {want}. Not answered: no number is given, since counting other lines would "
           "answer another question."]
    if nearest:
        out += ["", "Nearest templates (holding some of the words):"]
        for s, src in sorted(nearest, key=lambda x: (-len(x[0].held), -x[0].row.count))[:3]:
            out.append(f"- `{shown(s.row.text)}`: {_n(s.row.count, 'line')} (first at "
                       f"{_ref(src, s.row.first_line)}), holds "
                       + ", ".join(f"`{h}`" for h in s.held))
    out += ["", "Quote the words as the log writes them (e.g. \"Failed password\") to count "
                "the lines that contain them."]
    return "\n".join(out)


def unsure(reasons: list[str]) -> str:
    """A number code cannot place (a threshold, a rank, a range, a word that may describe it):
    no number is stated."""
    return ("Not sure what to count: " + "; ".join(reasons) + ". Not answered: no number is "
            "given, since counting other lines would answer another question. Code counts lines "
            "that hold text: ask with the text as the log writes it (e.g. \"status: 404\"), or, "
            "for a threshold or a rank, ask for the counts per group (e.g. \"how many failed "
            "passwords per ip?\") and compare them.")


def doubtful(doubts: list[str]) -> str:
    """A count of the question's literals code is not sure of (rlm.pipeline.codeonly
    .literal_check): no number is stated as the answer."""
    return (f"Not sure: {'; '.join(doubts)}. Not answered: no number is given as the answer. "
            "Quote the text as the log writes it to count it.")


def matched(q, concepts: list[str], tally, confident: bool) -> dict:
    """The JSON record of what the answer holds, with every matching line number."""
    kinds = _ranked(tally.kinds)
    groups = _ranked(tally.groups)
    return {
        "read_as": q.read_as(),
        "predicate": q.predicate_words(), "concepts": concepts, "confident": confident,
        "window": q.window.label if q.window else None, "group_by": q.group_by,
        "total": tally.total if confident else None,
        "kinds": [{"template": k, "lines": c, "first": _ref(src, ln)}
                  for k, (c, src, ln) in kinds[:JSON_ROWS]],
        "groups": [{"key": k, "lines": c, "first": _ref(src, ln)}
                   for k, (c, src, ln) in groups[:JSON_ROWS]],
        "rows_cut": max(0, len(kinds) - JSON_ROWS) + max(0, len(groups) - JSON_ROWS),
        "over": ({"op": q.over[0], "n": q.over[1],
                  "values": [k for k, _ in passing(q, tally)]} if q.over and confident else None),
        "lines": tally.lines if confident else {},
        "holds": holds(q, tally, len(kinds)) if confident else "no answer: nothing counted",
    }
