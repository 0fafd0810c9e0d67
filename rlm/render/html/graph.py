"""The module dependency graph of an audit, drawn as SVG by code: a layered layout (importers
above what they import, rlm.render.html.graph_layout), no layout service; edges are routed
through the gaps between layers and through slots of their own inside them, never through a
module's box, with an arrowhead on what is imported.

Accepted shapes: the audit's module graph (``views.graph``, rlm.codeview: nodes with ``id``
and ``path``, edges with ``source`` and ``target``), drawn between the module map's modules
(folders) when its files fall in them, the test modules left out; or ``audit.graph`` with
``nodes`` (names or ``{name}``) and ``edges`` (``[a, b]``, ``{from, to}`` or ``{source,
target}``); or ``imports`` / ``depends_on`` on each ``audit.modules`` entry. An edge a → b
means a imports b."""

from __future__ import annotations

from rlm.render.html.graph_layout import NODE_H, NODE_W, layers, layout, path_d, routes
from rlm.render.html.page import esc

__all__ = ["graph_of", "graph_svg", "layers"]


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


def graph_svg(audit: dict, views: dict | None = None) -> str:
    names, edges = graph_of(audit, views)
    if not names:
        return ""
    lay = layout(names, edges)
    level = {n: i for i, r in enumerate(lay.rows) for n in r}
    paths = []
    for (a, b), pts, up in zip(edges, routes(lay), lay.up):
        if up:  # laid out turned round: drawn from the importer, below, up to what it imports
            pts = pts[::-1]
        paths.append(f'<path class="edge" data-from="{esc(a)}" data-to="{esc(b)}" '
                     f'd="{path_d(pts)}" fill="none" stroke="#555" stroke-width="1.2" '
                     'marker-end="url(#arrow)"' + (' stroke-dasharray="5 3"' if up else "")
                     + f"><title>{esc(a)} imports {esc(b)}{' (a cycle)' if up else ''}</title>"
                     "</path>")
    boxes = []
    for n in names:
        x, y = lay.x[n], lay.top(level[n])
        label = n if len(n) <= 20 else "…" + n[-19:]
        boxes.append(f'<g class="node" data-name="{esc(n)}" data-layer="{level[n]}">'
                     f'<rect x="{x:.1f}" y="{y:.1f}" width="{NODE_W}" height="{NODE_H}" rx="4" '
                     f'fill="#eef3fa" stroke="#2f6fb5"/><text x="{x + NODE_W / 2:.1f}" '
                     f'y="{y + NODE_H / 2 + 4:.1f}" text-anchor="middle" font-size="12" '
                     f'font-family="monospace">{esc(label)}</text><title>{esc(n)}</title></g>')
    cycles = sum(lay.up)
    note = (f"{len(names)} modules, {len(edges)} imports between them; an arrow points from a "
            "module to one it imports, routed between the layers" + (
                f"; {cycles} dashed arrow(s) close a cycle" if cycles else "") + ".")
    w, h = lay.width, lay.height
    return (f'<p class="small muted">{esc(note)}</p><figure style="margin:0">'
            f'<svg class="graph" viewBox="0 0 {w:.0f} {h:.0f}" role="img" '
            f'style="max-width:{w * 1.3:.0f}px" '
            f'aria-label="module dependency graph"><defs><marker id="arrow" viewBox="0 0 10 10" '
            'refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
            '<path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>'
            + "".join(paths) + "".join(boxes) + "</svg></figure>")
