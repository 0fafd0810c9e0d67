"""The coverage map: where in the corpus each thing happened, as line ranges per file.

The ledger counts lines; the map places them. Strategies record what the model read
(:meth:`Recorder.read`) and the time window they kept (:meth:`Recorder.window`); the failed
units and skipped files come from the closed coverage. :func:`build` lays them over each
file's lines, one state per line, by priority (a failed unit wins over a read, a read over a
scan). The report carries the result as ``coverage.map``; the HTML report draws it as a bar.

Exact line totals per state are kept in ``totals``; a file with more than
``MAX_SEGMENTS`` runs of states is drawn in equal bins, each bin showing its most important
state and the mix of lines behind it, so a 600k-line log's map stays a few kilobytes.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field

from rlm.corpus.lines import merge_ranges

# most important first: a line's state is the first that claims it
STATES = ("failed", "read", "scanned", "outside", "unread")
MAX_SEGMENTS = 400
BINS = 200


@dataclass
class Recorder:
    """What a strategy saw happen, by file path and line range (1-based, inclusive)."""

    reads: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    windows: dict[str, list[tuple[int, int]]] = field(default_factory=dict)

    def read(self, path: str, a: int, b: int) -> None:
        self.reads.setdefault(path, []).append((a, b))

    def window(self, per_file: dict[str, list[tuple[int, int]]]) -> None:
        """The lines inside a time window, per file; the rest of those files is outside it."""
        for path, ranges in per_file.items():
            self.windows[path] = list(ranges)


def _inside(merged: list[tuple[int, int]], x: int) -> bool:
    i = bisect_right(merged, (x, float("inf"))) - 1
    return i >= 0 and merged[i][0] <= x <= merged[i][1]


def _reason(reasons: list[tuple[int, int, str]], x: int) -> str | None:
    i = bisect_right(reasons, (x, float("inf"), "")) - 1
    for j in range(i, max(-1, i - 50), -1):  # sorted by start; a few units may overlap
        if reasons[j][0] <= x <= reasons[j][1]:
            return reasons[j][2]
    return None


def _runs(n: int, layers: dict[str, list[tuple[int, int]]], base: str,
          reasons: list[tuple[int, int, str]]) -> list[list]:
    """[start, end, state, reason] runs covering lines 1..n, the first layer in STATES wins."""
    cuts = {1, n + 1}
    for ranges in layers.values():
        for a, b in ranges:
            cuts.update((max(1, min(a, n + 1)), max(1, min(b + 1, n + 1))))
    points = sorted(cuts)
    runs: list[list] = []
    for a, nxt in zip(points, points[1:]):
        state = next((s for s in STATES if s in layers and _inside(layers[s], a)), base)
        reason = _reason(reasons, a) if state == "failed" else None
        if runs and runs[-1][2] == state and runs[-1][3] == reason and runs[-1][1] == a - 1:
            runs[-1][1] = nxt - 1
        else:
            runs.append([a, nxt - 1, state, reason])
    return runs


def _binned(n: int, runs: list[list]) -> list[list]:
    """Equal bins over a file whose runs are too many to draw: each bin takes the most
    important state among its lines and names the mix ("read 3, scanned 9,997")."""
    size = -(-n // BINS)
    out: list[list] = []
    i = 0
    for a in range(1, n + 1, size):
        b = min(n, a + size - 1)
        mix: dict[str, int] = {}
        while i < len(runs) and runs[i][1] < a:
            i += 1
        j = i
        while j < len(runs) and runs[j][0] <= b:
            ra, rb = max(runs[j][0], a), min(runs[j][1], b)
            mix[runs[j][2]] = mix.get(runs[j][2], 0) + rb - ra + 1
            j += 1
        state = min(mix, key=lambda s: STATES.index(s) if s in STATES else len(STATES))
        note = ", ".join(f"{s} {k:,}" for s, k in mix.items()) if len(mix) > 1 else None
        out.append([a, b, state, note])
    return out


def file_map(path: str, lines: int, nbytes: int, rec: Recorder, failed: list,
             scanned: bool) -> dict:
    """One file's runs of states; ``failed`` are the coverage's failed units (any path)."""
    layers: dict[str, list[tuple[int, int]]] = {}
    reasons: list[tuple[int, int, str]] = []
    mine = [c for c in failed if c.path == path and c.line_start]
    if mine:
        layers["failed"] = merge_ranges([(c.line_start, c.line_end) for c in mine])
        reasons = sorted((c.line_start, c.line_end, c.reason) for c in mine)
    if rec.reads.get(path):
        layers["read"] = merge_ranges(rec.reads[path])
    if path in rec.windows:  # lines outside the window: the complement of its ranges
        inside = merge_ranges(rec.windows[path])
        gaps, at = [], 1
        for a, b in inside:
            if a > at:
                gaps.append((at, a - 1))
            at = b + 1
        if at <= lines:
            gaps.append((at, lines))
        layers["outside"] = gaps
    base = "scanned" if scanned else "unread"
    runs = _runs(lines, layers, base, reasons) if lines else []
    totals: dict[str, int] = {}
    for a, b, s, _ in runs:
        totals[s] = totals.get(s, 0) + b - a + 1
    binned = len(runs) > MAX_SEGMENTS
    return {"path": path, "lines": lines, "bytes": nbytes, "totals": totals,
            "binned": binned, "segments": _binned(lines, runs) if binned else runs}


def build(sources, rec: Recorder, cov) -> dict:
    """The map of an ask run: one entry per file read (``sources``: TextSource-like, with
    ``display``, ``line_count``, ``size``), the skipped files after them."""
    scanned = cov.lines_scanned_by_code > 0
    files = [file_map(s.display, s.line_count, s.size, rec, cov.chunks_failed, scanned)
             for s in sources]
    totals: dict[str, int] = {}
    for f in files:
        for s, k in f["totals"].items():
            totals[s] = totals.get(s, 0) + k
    skipped = [{"path": x.get("path", "?"), "reason": x.get("reason", "")}
               for x in cov.skipped]
    return {"unit": "lines", "lines": sum(f["lines"] for f in files), "totals": totals,
            "files": files, "skipped": skipped}
