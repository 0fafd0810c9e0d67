"""The module dependency graph: repository modules as nodes, resolved imports as edges; its
layers (0: imports no other module of the repository), its cycles (strongly connected groups
over the imports that run: module level and inside functions) and the most imported modules."""

from __future__ import annotations

from rlm.codeview.imports import Import
from rlm.codeview.shapes import GraphEdge, GraphNode, ModuleGraph
from rlm.codeview.sources import Sources

RANK = {"module": 0, "function": 1, "type_checking": 2}  # the strongest kind names an edge
RUNTIME = ("module", "function")
MOST_IMPORTED = 10


def build_graph(src: Sources, imports: list[Import]) -> ModuleGraph:
    g = ModuleGraph(produced_by="rlm (Python ast: import statements)", not_looked_at=[
        "imports built at run time (importlib.import_module, __import__)",
        "namespace packages: a folder without __init__.py starts a new module name",
        "calls between modules (an import is not a call)"])
    edges: dict[tuple[str, str], GraphEdge] = {}
    for i in imports:
        if i.target is None:
            continue
        s, t = src.module_of[i.source], i.target
        e = edges.get((s, t))
        if e is None or RANK[i.kind] < RANK[e.kind]:
            edges[(s, t)] = GraphEdge(source=s, target=t, line=i.line, kind=i.kind)
    g.edges = sorted(edges.values(), key=lambda e: (e.source, e.target))
    nodes = {m: GraphNode(id=m, path=p, package=_package(m), lines=src.lines(p),
                          is_test=src.is_test(p)) for p, m in src.module_of.items()}
    for e in g.edges:
        nodes[e.source].imports += 1
        nodes[e.target].imported_by += not nodes[e.source].is_test
    run = _adjacency(g.edges, RUNTIME)
    comps = strongly_connected(sorted(nodes), run)
    g.cycles = sorted((sorted(c) for c in comps if len(c) > 1), key=lambda c: (-len(c), c))
    layer = _layers(comps, run)
    for m, n in nodes.items():
        n.layer = layer[m]
    code = [n for n in nodes.values() if not n.is_test]
    if code:
        top = max(n.layer for n in code)
        g.layers = [sorted(n.id for n in code if n.layer == k) for k in range(top + 1)]
    g.nodes = sorted(nodes.values(), key=lambda n: n.id)
    g.most_imported = [n.id for n in sorted(code, key=lambda n: (-n.imported_by, n.id))
                       if n.imported_by][:MOST_IMPORTED]
    return g


def _package(m: str) -> str:
    return m.split(".")[0] if "." in m or "/" not in m else ""


def _adjacency(edges: list[GraphEdge], kinds: tuple[str, ...]) -> dict[str, list[str]]:
    adj: dict[str, list[str]] = {}
    for e in edges:
        if e.kind in kinds:
            adj.setdefault(e.source, []).append(e.target)
    return adj


def strongly_connected(nodes: list[str], adj: dict[str, list[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative (no recursion limit on deep graphs)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on, stack, out = set(), [], []
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(adj.get(root, ())))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(adj.get(w, ()))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(comp)
    return out


def _layers(comps: list[list[str]], adj: dict[str, list[str]]) -> dict[str, int]:
    """Tarjan emits components sinks first, so one pass in that order sees every successor's
    layer before its own: layer = 1 + the highest layer it imports."""
    comp_of = {m: i for i, c in enumerate(comps) for m in c}
    level = [0] * len(comps)
    for i, c in enumerate(comps):
        succ = {comp_of[w] for v in c for w in adj.get(v, ()) if comp_of[w] != i}
        level[i] = 1 + max((level[j] for j in succ), default=-1)
    return {m: level[comp_of[m]] for m in comp_of}
