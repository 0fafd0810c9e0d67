"""The coverage map (rlm.engine.covmap): every line of every file in exactly one state, placed
where it is; failures win over reads, reads over scans; the window's outside is marked; a map
with too many runs is drawn in bins whose exact totals are kept."""

from __future__ import annotations

from types import SimpleNamespace as NS

from rlm.engine.covmap import BINS, MAX_SEGMENTS, Recorder, build
from rlm.schemas.report import Coverage, FailedChunk


def _src(path, lines):
    return NS(display=path, line_count=lines, size=lines * 10)


def _state_at(fmap: dict, line: int) -> str:
    for a, b, state, _ in fmap["segments"]:
        if a <= line <= b:
            return state
    raise AssertionError(f"line {line} is in no segment")


def _adds_up(fmap: dict) -> None:
    segs = fmap["segments"]
    assert segs[0][0] == 1 and segs[-1][1] == fmap["lines"]
    assert all(b[0] == a[1] + 1 for a, b in zip(segs, segs[1:]))  # no gap, no overlap
    assert sum(fmap["totals"].values()) == fmap["lines"]


def test_states_are_placed_by_priority():
    rec = Recorder()
    rec.read("a.log", 10, 30)
    rec.read("a.log", 31, 40)  # adjacent reads merge
    cov = Coverage(lines_scanned_by_code=100, chunks_failed=[
        FailedChunk(chunk="c2", path="a.log", line_start=25, line_end=50, reason="HTTP 500")])
    m = build([_src("a.log", 100)], rec, cov)
    f = m["files"][0]
    _adds_up(f)
    assert [s[:3] for s in f["segments"]] == [[1, 9, "scanned"], [10, 24, "read"],
                                               [25, 50, "failed"], [51, 100, "scanned"]]
    assert f["segments"][2][3] == "HTTP 500"
    assert m["totals"] == {"scanned": 59, "read": 15, "failed": 26}


def test_window_outside_and_unread_without_a_scan():
    rec = Recorder()
    rec.window({"w.log": [(40, 60)]})
    rec.read("w.log", 40, 60)
    m = build([_src("w.log", 100), _src("other.log", 5)], rec, Coverage())
    w, other = m["files"]
    _adds_up(w)
    assert _state_at(w, 1) == "outside" and _state_at(w, 50) == "read" \
        and _state_at(w, 61) == "outside"
    assert other["segments"] == [[1, 5, "unread", None]]  # nothing scanned it, nothing read it
    assert m["lines"] == 105


def test_skipped_files_are_listed():
    cov = Coverage(skipped=[{"path": "x.png", "reason": "binary"}], lines_scanned_by_code=3)
    m = build([_src("a.log", 3)], Recorder(), cov)
    assert m["skipped"] == [{"path": "x.png", "reason": "binary"}]


def test_many_runs_are_binned_with_exact_totals():
    rec = Recorder()
    n = 600_000
    for ln in range(1, n, 997):  # ~600 scattered single lines read by the model
        rec.read("big.log", ln, ln)
    m = build([_src("big.log", n)], rec, Coverage(lines_scanned_by_code=n))
    f = m["files"][0]
    reads = len(range(1, n, 997))
    assert reads * 2 > MAX_SEGMENTS and f["binned"]
    assert len(f["segments"]) <= BINS + 1
    assert f["totals"] == {"read": reads, "scanned": n - reads}
    segs = f["segments"]
    assert segs[0][0] == 1 and segs[-1][1] == n
    assert all(b[0] == a[1] + 1 for a, b in zip(segs, segs[1:]))
    # a bin with a read line in it shows it, and names the mix
    assert segs[0][2] == "read" and "scanned" in segs[0][3]
