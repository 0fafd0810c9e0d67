"""The module graph's layered drawing (rlm.render.html.graph_layout): every edge routed
through the gaps between layers and through slots of its own inside them, so that no edge
runs through a module's box, and every arrow ends on the box it points to."""

from __future__ import annotations

import random

import pytest

from rlm.render.html.graph_layout import NODE_H, NODE_W, layout, routes


def _curve(pts):
    """Points along the drawn edge: a cubic with vertical tangents across each gap (as
    path_d writes it), a straight run down each layer between."""
    out = []
    for k in range(0, len(pts) - 1, 2):
        (x1, y1), (x2, y2) = pts[k], pts[k + 1]
        mid = (y1 + y2) / 2
        for i in range(41):
            t = i / 40
            u = 1 - t
            x = u ** 3 * x1 + 3 * u * u * t * x1 + 3 * u * t * t * x2 + t ** 3 * x2
            y = u ** 3 * y1 + 3 * u * u * t * mid + 3 * u * t * t * mid + t ** 3 * y2
            out.append((x, y))
        if k + 2 < len(pts):
            (xa, ya), (xb, yb) = pts[k + 1], pts[k + 2]
            out += [(xa, ya + (yb - ya) * i / 10) for i in range(11)]
    return out


def _crossings(names, edges):
    lay = layout(names, edges)
    level = {n: i for i, r in enumerate(lay.rows) for n in r}
    boxes = {n: (lay.x[n], lay.top(level[n])) for n in names}
    hits = []
    for chain, pts in zip(lay.chains, routes(lay)):
        ends = {chain[0], chain[-1]}
        for x, y in _curve(pts):
            for n, (bx, by) in boxes.items():
                if n not in ends and bx < x < bx + NODE_W and by < y < by + NODE_H:
                    hits.append((chain[0], chain[-1], n))
        # it leaves the bottom of one end and arrives on the top of the other
        (x0, y0), (x1, y1) = pts[0], pts[-1]
        a, b = chain[0], chain[-1]
        assert boxes[a][0] < x0 < boxes[a][0] + NODE_W and y0 == boxes[a][1] + NODE_H
        assert boxes[b][0] < x1 < boxes[b][0] + NODE_W and y1 == boxes[b][1]
    return lay, hits


def test_a_long_edge_goes_round_the_middle_layer():
    """a imports b and c, b imports c: drawn straight, a -> c would cross b's box."""
    lay, hits = _crossings(["a", "b", "c"], [("a", "b"), ("b", "c"), ("a", "c")])
    assert hits == []
    assert len(lay.rows[1]) == 2  # b and the waypoint of a -> c, side by side


@pytest.mark.parametrize("seed", range(8))
def test_no_edge_runs_through_a_box(seed):
    rng = random.Random(seed)
    names = [f"m{i}" for i in range(rng.randint(6, 22))]
    edges = sorted({(rng.choice(names), rng.choice(names)) for _ in range(len(names) * 2)})
    edges = [(a, b) for a, b in edges if a != b]
    lay, hits = _crossings(names, edges)
    assert hits == []
    back = sum(lay.up)
    assert back == sum(1 for a, b in edges if lay.rows and  # the turned-round edges point up
                       next(i for i, r in enumerate(lay.rows) if a in r)
                       > next(i for i, r in enumerate(lay.rows) if b in r))
