"""A layered drawing of a directed graph (importers above what they import), by code, with
edges routed through the gaps so that none runs through a node.

1. Cycles: the edges a depth-first walk finds going back are turned round for the layout
   (and drawn dashed, pointing up), so every edge goes down at least one layer.
2. Layers by longest path: a node sits one layer below the lowest node above it.
3. An edge over several layers gets a waypoint in each layer it crosses: a slot of its own in
   that layer, so nodes are set around it, never on it (the Sugiyama method).
4. Order within a layer by the mean place of the neighbours (sweeps down and up).
5. An edge leaves from the bottom of its node (each from its own port, in the order of where
   they go), bends through the gap between two layers as a curve that stays in the gap,
   goes straight down through a layer at its waypoint's slot, and ends on the top of its
   target with an arrowhead.
"""

from __future__ import annotations

from dataclasses import dataclass, field

NODE_W, NODE_H, GAP_X, GAP_Y = 150, 30, 24, 56
WAY_W = 14  # a waypoint's slot in a layer


def back_edges(names: list[str], edges: list[tuple[str, str]]) -> set[tuple[str, str]]:
    """The edges a depth-first walk finds going back: turning them round leaves no cycle."""
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
    return back


def _levels(names: list[str], down: list[tuple[str, str]]) -> dict[str, int]:
    """Longest path from a top node, iteratively (no recursion limit on deep graphs)."""
    parents: dict[str, list[str]] = {n: [] for n in names}
    for a, b in down:
        parents[b].append(a)
    level: dict[str, int] = {}
    for n in names:
        todo = [n]
        while todo:
            x = todo[-1]
            missing = [p for p in parents[x] if p not in level]
            if missing:
                todo.extend(missing)
                continue
            level[x] = 1 + max((level[p] for p in parents[x]), default=-1)
            todo.pop()
    return level


@dataclass
class Layout:
    rows: list[list[str]]  # per layer, in order; waypoints are named "\0<edge index>:<layer>"
    chains: list[list[str]] = field(default_factory=list)  # per edge, top to bottom
    up: list[bool] = field(default_factory=list)  # per edge: turned round (closes a cycle)
    x: dict[str, float] = field(default_factory=dict)  # left of each slot
    width: float = 0.0
    height: float = 0.0

    def is_node(self, n: str) -> bool:
        return not n.startswith("\0")

    def slot_w(self, n: str) -> float:
        return NODE_W if self.is_node(n) else WAY_W

    def top(self, layer: int) -> float:
        return GAP_Y / 2 + layer * (NODE_H + GAP_Y)


def _order(rows: list[list[str]], segs: list[tuple[str, str]], sweeps: int = 4) -> None:
    """Barycentre ordering: each layer by the mean place of its neighbours above, then below."""
    above: dict[str, list[str]] = {}
    below: dict[str, list[str]] = {}
    for a, b in segs:
        below.setdefault(a, []).append(b)
        above.setdefault(b, []).append(a)

    def by(row: list[str], ref: list[str], near: dict[str, list[str]]) -> None:
        place = {n: j for j, n in enumerate(ref)}
        keep = {n: j for j, n in enumerate(row)}

        def key(n: str) -> float:
            ps = [place[p] for p in near.get(n, []) if p in place]
            return sum(ps) / len(ps) if ps else keep[n]
        row.sort(key=key)

    for _ in range(sweeps):
        for i in range(1, len(rows)):
            by(rows[i], rows[i - 1], above)
        for i in range(len(rows) - 2, -1, -1):
            by(rows[i], rows[i + 1], below)


def layout(names: list[str], edges: list[tuple[str, str]]) -> Layout:
    back = back_edges(names, edges)
    down = [(b, a) if (a, b) in back else (a, b) for a, b in edges]
    level = _levels(names, down)
    rows: list[list[str]] = [[] for _ in range(max(level.values(), default=0) + 1)]
    for n in names:
        rows[level[n]].append(n)
    lay = Layout(rows)
    segs = []
    for i, (a, b) in enumerate(down):
        chain = [a]
        for layer in range(level[a] + 1, level[b]):
            way = f"\0{i}:{layer}"
            rows[layer].append(way)
            chain.append(way)
        chain.append(b)
        segs += list(zip(chain, chain[1:]))
        lay.chains.append(chain)
        lay.up.append((edges[i][0], edges[i][1]) in back)
    _order(rows, segs)
    widths = [sum(lay.slot_w(n) + GAP_X for n in r) - GAP_X for r in rows]
    lay.width = max(widths, default=0) + 2 * GAP_X
    lay.height = len(rows) * (NODE_H + GAP_Y)
    for r, w in zip(rows, widths):
        at = (lay.width - w) / 2
        for n in r:
            lay.x[n] = at
            at += lay.slot_w(n) + GAP_X
    return lay


def _ports(lay: Layout, level: dict[str, int]) -> dict[tuple[int, int], float]:
    """x of each edge's end on its node: (edge, 0) leaving, (edge, 1) arriving; a node's edges
    spread along its side in the order of where they go, so arrows do not pile up."""
    out: dict[tuple[int, int], float] = {}
    sides: dict[tuple[str, int], list[tuple[float, int]]] = {}
    for i, chain in enumerate(lay.chains):
        nxt, prev = chain[1], chain[-2]
        sides.setdefault((chain[0], 0), []).append((lay.x[nxt] + lay.slot_w(nxt) / 2, i))
        sides.setdefault((chain[-1], 1), []).append((lay.x[prev] + lay.slot_w(prev) / 2, i))
    for (n, end), goes in sides.items():
        goes.sort()
        for j, (_, i) in enumerate(goes):
            out[(i, end)] = lay.x[n] + NODE_W * (j + 1) / (len(goes) + 1)
    return out


def routes(lay: Layout) -> list[list[tuple[float, float]]]:
    """Per edge, top to bottom: the points it passes (leave, then each waypoint's entry and
    exit of its layer, then arrive). Between two layers it is drawn as a curve in the gap
    (see `path_d`), inside a layer as a straight vertical run at its waypoint's slot."""
    level = {n: i for i, r in enumerate(lay.rows) for n in r}
    ports = _ports(lay, level)
    out = []
    for i, chain in enumerate(lay.chains):
        a, b = chain[0], chain[-1]
        pts = [(ports[(i, 0)], lay.top(level[a]) + NODE_H)]
        for way in chain[1:-1]:
            x = lay.x[way] + WAY_W / 2
            pts += [(x, lay.top(level[way])), (x, lay.top(level[way]) + NODE_H)]
        pts.append((ports[(i, 1)], lay.top(level[b])))
        out.append(pts)
    return out


def path_d(pts: list[tuple[float, float]]) -> str:
    """Gaps as cubic curves with vertical tangents (their y stays between the two layers),
    layers as straight runs: pts alternate gap start, gap end."""
    d = [f"M{pts[0][0]:.1f},{pts[0][1]:.1f}"]
    for k in range(0, len(pts) - 1, 2):
        (x1, y1), (x2, y2) = pts[k], pts[k + 1]
        mid = (y1 + y2) / 2
        d.append(f"C{x1:.1f},{mid:.1f} {x2:.1f},{mid:.1f} {x2:.1f},{y2:.1f}")
        if k + 2 < len(pts):
            d.append(f"L{pts[k + 2][0]:.1f},{pts[k + 2][1]:.1f}")
    return " ".join(d)


def layers(names: list[str], edges: list[tuple[str, str]]) -> list[list[str]]:
    """Nodes by layer, top (importers) to bottom (what they import), ordered in each layer."""
    return [[n for n in r if not n.startswith("\0")] for r in layout(names, edges).rows]
