"""The module dependency graph of an audit, drawn as SVG by code: a layered layout (importers
above what they import), no layout service.

1. Cycles are broken by leaving out the edges a depth-first walk finds going back.
2. Layers by longest path: a module sits one layer below the lowest module importing it.
3. Order within a layer by the mean position of its importers (two sweeps), which keeps most
   edges short and uncrossed; good enough for tens of modules.

Accepted shapes: the audit's module graph (``views.graph``, rlm.codeview: nodes with ``id``
and ``path``, edges with ``source`` and ``target``), drawn between the module map's modules
(folders) when its files fall in them, the test modules left out; or ``audit.graph`` with
``nodes`` (names or ``{name}``) and ``edges`` (``[a, b]``, ``{from, to}`` or ``{source,
target}``); or ``imports`` / ``depends_on`` on each ``audit.modules`` entry. An edge a → b
means a imports b."""

from __future__ import annotations

from rlm.render.html.page import esc

NODE_W, NODE_H, GAP_X, GAP_Y = 150, 30, 24, 56


def _module_of(path: str, modules: list[str]) -> str | None:
    """The module map's module (a folder, or "(root)") holding a file."""
    folder = path.rpartition("/")[0]
    best = None
    for m in modules:
        if folder == m or folder.startswith(m + "/"):
            best = m if best is None or len(m) > len(best) else best
    return best or ("(root)" if "(root)" in modules and not folder else None)


def _views_graph(views: dict, modules: list[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """rlm.codeview's module graph, folded onto the module map when every non-test file of it
    falls in a module there (else the modules of the graph itself)."""
    nodes = [n for n in views.get("nodes") or [] if isinstance(n, dict) and not n.get("is_test")]
    ids = {n.get("id"): n for n in nodes}
    edges = [(e.get("source"), e.get("target")) for e in views.get("edges") or []
             if isinstance(e, dict) and e.get("source") in ids and e.get("target") in ids]
    where = {i: _module_of(n.get("path") or "", modules) for i, n in ids.items()}
    if modules and ids and all(where.values()):
        names = [m for m in modules if m in set(where.values())]
        return names, list(dict.fromkeys((where[a], where[b]) for a, b in edges
                                         if where[a] != where[b]))
    return [str(i) for i in ids], [(str(a), str(b)) for a, b in edges if a != b]


def graph_of(audit: dict, views: dict | None = None) -> tuple[list[str], list[tuple[str, str]]]:
    modules = [str(m.get("name")) for m in audit.get("modules") or [] if isinstance(m, dict)]
    if isinstance(views, dict) and views.get("nodes"):
        return _views_graph(views, modules)
    g = audit.get("graph") if isinstance(audit.get("graph"), dict) else {}
    nodes = [n.get("name") or n.get("id") if isinstance(n, dict) else n for n in g.get("nodes") or []]
    edges = []
    for e in g.get("edges") or []:
        if isinstance(e, dict):
            a, b = e.get("from") or e.get("source"), e.get("to") or e.get("target")
        elif isinstance(e, (list, tuple)) and len(e) >= 2:
            a, b = e[0], e[1]
        else:
            continue
        edges.append((str(a), str(b)))
    for m in audit.get("modules") or []:
        if isinstance(m, dict):
            for b in (m.get("imports") or m.get("depends_on") or []):
                edges.append((str(m.get("name")), str(b)))
    if not edges:
        return [], []
    names = list(dict.fromkeys([str(n) for n in nodes if n] + [x for e in edges for x in e]))
    return names, list(dict.fromkeys((a, b) for a, b in edges if a != b))


def _acyclic(names: list[str], edges: list[tuple[str, str]]) -> list[tuple[str, str]]:
    out_of: dict[str, list[str]] = {n: [] for n in names}
    for a, b in edges:
        out_of[a].append(b)
    state: dict[str, int] = {}
    back: set[tuple[str, str]] = set()
    for root in names:
        if root in state:
            continue
        stack = [(root, iter(out_of[root]))]
        state[root] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                back.add((node, nxt))
            elif nxt not in state:
                state[nxt] = 1
                stack.append((nxt, iter(out_of[nxt])))
    return [e for e in edges if e not in back]


def layers(names: list[str], edges: list[tuple[str, str]]) -> list[list[str]]:
    """Nodes by layer, top (importers) to bottom (what they import), ordered in each layer."""
    dag = _acyclic(names, edges)
    parents: dict[str, list[str]] = {n: [] for n in names}
    for a, b in dag:
        parents[b].append(a)
    level: dict[str, int] = {}

    def depth(n: str) -> int:  # longest path from a top node, iteratively
        todo = [n]
        while todo:
            x = todo[-1]
            missing = [p for p in parents[x] if p not in level]
            if missing:
                todo.extend(missing)
                continue
            level[x] = 1 + max((level[p] for p in parents[x]), default=-1)
            todo.pop()
        return level[n]

    for n in names:
        depth(n)
    rows: list[list[str]] = [[] for _ in range(max(level.values(), default=0) + 1)]
    for n in names:
        rows[level[n]].append(n)
    for _ in range(2):  # order by the mean place of the parents in the row above
        for i in range(1, len(rows)):
            place = {n: j for j, n in enumerate(rows[i - 1])}
            rows[i].sort(key=lambda n: sum(place.get(p, 0) for p in parents[n])
                         / max(1, sum(p in place for p in parents[n])))
    return rows


def graph_svg(audit: dict, views: dict | None = None) -> str:
    names, edges = graph_of(audit, views)
    if not names:
        return ""
    rows = layers(names, edges)
    width = max(len(r) for r in rows) * (NODE_W + GAP_X) + GAP_X
    height = len(rows) * (NODE_H + GAP_Y)
    at: dict[str, tuple[float, float]] = {}
    for i, r in enumerate(rows):
        x0 = (width - len(r) * (NODE_W + GAP_X) + GAP_X) / 2
        for j, n in enumerate(r):
            at[n] = (x0 + j * (NODE_W + GAP_X), GAP_Y / 2 + i * (NODE_H + GAP_Y))
    lines = []
    for a, b in edges:
        (xa, ya), (xb, yb) = at[a], at[b]
        up = ya >= yb  # an edge of a cycle, drawn dashed
        y1, y2 = (ya, yb + NODE_H) if up else (ya + NODE_H, yb)
        lines.append(f'<line class="edge" data-from="{esc(a)}" data-to="{esc(b)}" '
                     f'x1="{xa + NODE_W / 2:.1f}" y1="{y1:.1f}" x2="{xb + NODE_W / 2:.1f}" '
                     f'y2="{y2:.1f}" stroke="#555" stroke-width="1.2" marker-end="url(#arrow)"'
                     + (' stroke-dasharray="5 3"' if up else "") + f"><title>{esc(a)} imports "
                     f"{esc(b)}{' (a cycle)' if up else ''}</title></line>")
    boxes = []
    for n, (x, y) in at.items():
        label = n if len(n) <= 20 else "…" + n[-19:]
        layer = next(i for i, r in enumerate(rows) if n in r)
        boxes.append(f'<g class="node" data-name="{esc(n)}" data-layer="{layer}">'
                     f'<rect x="{x:.1f}" y="{y:.1f}" width="{NODE_W}" height="{NODE_H}" rx="4" '
                     f'fill="#eef3fa" stroke="#2f6fb5"/><text x="{x + NODE_W / 2:.1f}" '
                     f'y="{y + NODE_H / 2 + 4:.1f}" text-anchor="middle" font-size="12" '
                     f'font-family="monospace">{esc(label)}</text><title>{esc(n)}</title></g>')
    cycles = sum(1 for a, b in edges if at[a][1] >= at[b][1])
    note = (f"{len(names)} modules, {len(edges)} imports between them; an arrow points from a "
            "module to one it imports" + (f"; {cycles} dashed arrow(s) close a cycle" if cycles
                                           else "") + ".")
    return (f'<p class="small muted">{esc(note)}</p><figure style="margin:0">'
            f'<svg class="graph" viewBox="0 0 {width:.0f} {height:.0f}" role="img" '
            f'style="max-width:{width * 1.3:.0f}px" '
            f'aria-label="module dependency graph"><defs><marker id="arrow" viewBox="0 0 10 10" '
            'refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
            '<path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>'
            + "".join(lines) + "".join(boxes) + "</svg></figure>")
