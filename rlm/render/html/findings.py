"""What was found: the answer, the event-kind table, the findings with their evidence lines
quoted from the file and a ``path:line`` that copies on click, and the unverified claims in a
section of their own. Each group has an anchor (``#g-<id>``), each event kind of the table
``#kind-<id>``, that the timeline links to.

Evidence is shown for the first lines of each group; every line's ``path:line`` is listed
however many there are, so the page stays small and no finding is left out."""

from __future__ import annotations

from rlm.render.html.page import esc, ref, section, table

EVIDENCE_PER_GROUP = 12
EVIDENCE_TOTAL = 300


def _src(f: dict) -> tuple[str, int, int]:
    s = f.get("source") or {}
    a = int(s.get("line_start") or 0)
    return s.get("path", "?"), a, int(s.get("line_end") or a)


def _evidence(text: str, width: int = 1200) -> str:
    t = text if len(text) <= width else text[:width] + "…"
    return f"<pre>{esc(t)}</pre>"


def _finding(f: dict, show_evidence: bool, claim: bool = True) -> str:
    path, a, b = _src(f)
    note = f' <span class="muted small">({esc(f["note"])})</span>' if f.get("note") else ""
    head = (f'<p class="claim">{esc(f.get("claim", ""))}{note}</p>' if claim else "")
    ev = _evidence(f.get("evidence") or "") if show_evidence and f.get("evidence") else ""
    return (f'<div class="finding" id="f-{esc(f.get("id"))}" data-verified="true">{head}'
            f'<div class="evline">{ref(path, a, b)}{ev}</div></div>')


def _refs_only(fs: list[dict]) -> str:
    return ('<p class="small">Also: ' + " ".join(
        f'<span class="finding" id="f-{esc(f.get("id"))}" data-verified="true">{ref(*_src(f))}'
        "</span>" for f in fs) + "</p>")


def anchors(rep: dict) -> dict[str, str]:
    """``path:line`` of each finding -> its anchor on the page (the first finding there), and
    ``path:`` -> "" for each file of the corpus (rlm.render.html.text)."""
    out: dict[str, str] = {}
    for f in rep.get("findings") or []:
        if isinstance(f, dict) and f.get("id") is not None:
            path, a, _ = _src(f)
            out.setdefault(f"{path}:{a}", f"f-{f['id']}")
            out.setdefault(f"{path}:", "")
    files = ((rep.get("coverage") or {}).get("map") or {}).get("files") or []
    for p in [x.get("path") for x in files] + [(rep.get("corpus") or {}).get("path")]:
        if p:
            out.setdefault(f"{p}:", "")
    return out


def _grouped(rep: dict, verified: list[dict]) -> str:
    by_group: dict[str, list[dict]] = {}
    for f in verified:
        by_group.setdefault(f.get("group") or "", []).append(f)
    out, shown = [], 0
    for g in rep.get("groups") or []:
        fs = by_group.pop(str(g.get("id")), [])
        if not fs:
            continue
        k = min(len(fs), EVIDENCE_PER_GROUP, max(0, EVIDENCE_TOTAL - shown))
        shown += k
        tag = g.get("severity") or g.get("label")
        label = f' <span class="tag">{esc(tag)}</span>' if tag else ""
        n = g["count"] if isinstance(g.get("count"), int) else len(fs)  # an event kind's count
        what = (f"one story: {n} lines share {g.get('key')}" if g.get("kind") == "identifier"
                else f"{n:,} line{'s' if n != 1 else ''}"
                + (f" ({len(fs)} cited below)" if n > len(fs) else "") + f": {g.get('why') or ''}")
        out.append(f'<div id="g-{esc(g.get("id"))}"><h3>{esc(g.get("id"))} · {esc(what)}{label}</h3>'
                   f'<p class="claim">{esc(fs[0].get("claim", ""))}</p>'
                   + "".join(_finding(f, True, claim=False).replace('class="finding"',
                                                                     'class="finding tight"', 1)
                             for f in fs[:k])
                   + (_refs_only(fs[k:]) if fs[k:] else "") + "</div>")
        if k < len(fs):
            out.append(f'<p class="small muted">{k} of {len(fs)} lines shown with their text.</p>')
    rest = [f for fs in by_group.values() for f in fs]
    if rest:
        out.append(_flat(rest, shown))
    return "".join(out)


def _flat(fs: list[dict], shown: int = 0) -> str:
    k = min(len(fs), max(0, EVIDENCE_TOTAL - shown))
    out = "".join(_finding(f, True) for f in fs[:k])
    if k < len(fs):
        out += (f'<p class="small muted">{k} of {len(fs)} findings shown with their text; the '
                "rest by path:line.</p>" + _refs_only(fs[k:]))
    return out


def findings_sections(rep: dict) -> str:
    fs = [f for f in rep.get("findings") or [] if isinstance(f, dict)]
    ok = [bool(f.get("verified")) and f.get("status") != "rejected" for f in fs]
    verified = [f for f, good in zip(fs, ok) if good]
    unverified = [f for f, good in zip(fs, ok) if not good]
    out = []
    if verified:
        body = (_grouped(rep, verified) if rep.get("groups")
                else f'<div id="g-findings">{_flat(verified)}</div>')
        out.append(section(f"Findings ({len(verified)}), evidence checked by code", body,
                           "findings"))
    if unverified:
        items = []
        for f in unverified:
            path, a, b = _src(f)
            cited = f.get("evidence_path") or ""
            items.append(f'<div class="finding" data-verified="false"><span class="tag unverified">'
                         f'not verified</span> {esc(f.get("claim", ""))} — cited '
                         f'{ref(path, a, b) if a else esc(cited)}'
                         + (f'<p class="small muted">{esc(f["note"])}</p>' if f.get("note") else "")
                         + "</div>")
        out.append(section(f"Not verified ({len(unverified)}): claims whose evidence did not "
                           "check out — not facts", "".join(items), "unverified"))
    return "".join(out)


def _where(k: dict) -> str:
    w = k.get("where")
    if isinstance(w, dict):
        return ", ".join(f"{esc(p)} ({n:,})" if isinstance(n, int) else esc(p) for p, n in w.items())
    if isinstance(w, list):  # [[component, count], ...] or [{name, count}, ...] or names
        out = []
        for x in w:
            if isinstance(x, (list, tuple)) and len(x) == 2 and isinstance(x[1], int):
                out.append(f"{esc(x[0])} ({x[1]:,})")
            elif isinstance(x, dict):
                n = x.get("count")
                out.append(esc(x.get("name") or x.get("value") or "")
                           + (f" ({n:,})" if isinstance(n, int) else ""))
            else:
                out.append(esc(x))
        return ", ".join(out)
    return esc(w or "")


KINDS_SHOWN = 100  # kinds drawn with their examples; the rest are counted in the caption


def event_kinds(rep: dict) -> list[dict]:
    """The report's event-kind rows with their example lines (issue 19's KindRow shape), under
    either name it may carry. Kinds without examples (``matched.kinds``) are drawn by their
    groups (kind "event") and the answer's own table, not a second time here."""
    kinds = [k for k in rep.get("event_kinds") or rep.get("kinds") or [] if isinstance(k, dict)]
    return [k for k in kinds if k.get("examples")]


def _seen(k: dict, end: str) -> str:
    """First or last time as the file writes it, else the line."""
    t = k.get(f"{end}_seen") or k.get(f"{end}_time") or k.get(end)
    line = k.get(f"{end}_line")
    return str(t) if t else (f"line {line:,}" if isinstance(line, int) else "")


def _example_ref(e: dict, links: dict[str, str]) -> str:
    """An example line's path:line, linked to its finding when the page draws one there."""
    path, line = e.get("path", "?"), int(e.get("line") or e.get("line_start") or 0)
    target = links.get(f"{path}:{line}")
    return f'<a href="#{esc(target)}">{ref(path, line)}</a>' if target else ref(path, line)


def kinds_section(rep: dict) -> str:
    """The event kinds (template, severity, count, first and last time, where), each row
    linking to its example lines below the table."""
    every = event_kinds(rep)
    if not every:
        return ""
    kinds = every[:KINDS_SHOWN]
    total = sum(int(k.get("count") or 0) for k in every)
    cut = (f"; the other {len(every) - len(kinds):,} are in the JSON report (`event_kinds`)"
           if len(every) > len(kinds) else "")
    caption = (f'<p class="small">Ranked by code (failures first, the worst level first, then '
               f"the biggest): <strong>{len(kinds):,} of {len(every):,} kinds shown</strong>, "
               f"{total:,} lines in all{cut}.</p>")
    rows, examples, links = [], [], anchors(rep)
    for i, k in enumerate(kinds, 1):
        key = str(k.get("id") or f"k{i}")
        exs = [e for e in k.get("examples") or k.get("lines") or [] if isinstance(e, dict)]
        rows.append([f'<a href="#kind-{esc(key)}">{esc(k.get("template") or k.get("name") or key)}</a>',
                     esc(k.get("severity") or ""), f'{int(k.get("count") or k.get("lines") or 0):,}',
                     esc(_seen(k, "first")), esc(_seen(k, "last")), _where(k)])
        lines = "".join(
            f'<div class="finding" data-verified="true">{_example_ref(e, links)}'
            f'{_evidence(e.get("text") or e.get("evidence") or "")}</div>' for e in exs)
        examples.append(f'<div id="kind-{esc(key)}"><h3>{esc(key)} · '
                        f'{esc(k.get("template") or k.get("name") or "")}</h3>{lines}</div>')
    return section("Event kinds", caption
                   + table(["Kind", "Severity", "Count", "First", "Last", "Where"], rows,
                           num={2}) + "".join(examples), "kinds")
