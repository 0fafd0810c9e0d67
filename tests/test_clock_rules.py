"""The time rules on the log's clock, on a log whose line rate is uneven: stretches of the
file and clock windows disagree there, and the clock is right.

The log (written here, its truth known by construction) runs 12:00-18:00:
- a request line every 2 s until 17:00, then one a minute (a quiet last hour);
- a heartbeat every 60 s from 12:00, which stops at 17:00 (a silence of one hour);
- a cache-warming flood, 150 lines a second from 14:00 to 14:03 (most of the file's lines);
- a refused-connection burst, 5 a second from 15:30 to 15:32.
By stretches of lines, the flood fills most of the file: the heartbeat looks absent for many
stretches (a false "return after a quiet stretch"), the flood's share of a stretch hardly
changes (no burst), and the quiet last hour is a sliver of the file (no silence).
"""

from __future__ import annotations

import calendar
import re

import pytest

from rlm.corpus.clock import clock_of
from rlm.corpus.counter import BlockReader
from rlm.corpus.template_scan import count_templates
from rlm.corpus.profile import profile_log
from rlm.corpus.signals import rate_rules
from rlm.corpus.source import TextSource

T0 = calendar.timegm((2026, 3, 14, 12, 0, 0, 0, 0, 0))


def _stamp(t: float) -> str:
    import time
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(int(t))) + f".{int(t % 1 * 1000):03d}"


def write_uneven(path, timed: bool = True) -> dict:
    events: list[tuple[float, str]] = []
    for k in range(int(5 * 3600 / 2)):
        events.append((T0 + 2 * k, f"INFO  [api] GET /v1/items/{k % 977} 200 {k % 90}ms"))
    for k in range(60):
        events.append((T0 + 5 * 3600 + 60 * k + 1, f"INFO  [api] GET /v1/items/{k} 200 12ms"))
    for k in range(5 * 60):
        events.append((T0 + 60 * k + 0.5, f"INFO  [monitor] heartbeat ok seq={k}"))
    for k in range(150 * 180):
        events.append((T0 + 2 * 3600 + k / 150, f"DEBUG [cache] warming key=k{k} shard {k % 16}"))
    for k in range(5 * 120):
        events.append((T0 + 3.5 * 3600 + k / 5, f"ERROR [db] connection refused to 10.0.3.{k % 9}:5432"))
    events.sort()
    with open(path, "w") as f:
        for t, msg in events:
            f.write((f"{_stamp(t)} " if timed else "") + msg + "\n")
    lines = [m for _, m in events]
    return {"last_heartbeat": max(i for i, m in enumerate(lines, 1) if "heartbeat" in m),
            "first_warming": min(i for i, m in enumerate(lines, 1) if "warming" in m),
            "first_refused": min(i for i, m in enumerate(lines, 1) if "refused" in m)}


@pytest.fixture(scope="module")
def uneven(tmp_path_factory):
    p = tmp_path_factory.mktemp("clock") / "uneven.log"
    return p, write_uneven(p), count_templates(p)


def _by(picks, rule, word):
    return [p for p in picks if p.rule == rule and word in p.template]


def test_the_counter_puts_its_stretches_on_the_clock(uneven):
    p, key, tc = uneven
    clock, why = clock_of(tc.block_t0, tc.block_t1)
    assert clock is not None, why
    assert clock.start[0] == T0 and clock.end[-1] == pytest.approx(T0 + 6 * 3600 - 59, abs=1)
    assert clock.start == sorted(clock.start)
    # the flood's 3 minutes take most stretches of the file; the quiet hour takes one or two
    in_flood = sum(1 for a, b in zip(clock.start, clock.end) if b <= T0 + 2 * 3600 + 181
                   and a >= T0 + 2 * 3600 - 60)
    assert in_flood > len(clock.start) / 2


def test_clock_and_stretches_disagree_and_the_clock_is_right(uneven):
    p, key, tc = uneven
    on_clock = rate_rules(tc, seen=BlockReader([p], tc).time)
    by_stretch = rate_rules(tc, use_clock=False)
    # the heartbeat never paused before 17:00: a return is a stretch artefact of the flood
    assert _by(by_stretch, "after-quiet", b"heartbeat") and not _by(on_clock, "after-quiet",
                                                                     b"heartbeat")
    # it stopped for the last hour: the clock sees it, stretches cannot (one stretch long)
    [sil] = _by(on_clock, "silence", b"heartbeat")
    assert not _by(by_stretch, "silence", b"heartbeat")
    assert "last at 16:59:00" in sil.why and "to the end of the log at 17:59" in sil.why
    # the flood is 120x its average rate in clock time, but barely changes its share of lines
    [flood] = _by(on_clock, "burst", b"warming")
    assert not _by(by_stretch, "burst", b"warming")
    # (the stretches at its edges are mostly quiet time: the window is the flood's core)
    assert re.search(r"between 14:00:0\d and 14:02:5\d", flood.why), flood.why
    # a real burst both see; only the clock says when
    [refused] = _by(on_clock, "burst", b"refused")
    assert _by(by_stretch, "burst", b"refused")
    assert re.search(r"between 15:30:0\d and 15:31:59", refused.why), refused.why
    assert "x its average" in refused.why


def test_the_profile_picks_the_clock_answers_with_their_lines(uneven):
    p, key, tc = uneven
    with TextSource(p) as src:
        prof = profile_log(src)
        assert "heartbeat" in src.line(key["last_heartbeat"])
    assert key["last_heartbeat"] in prof.candidates
    assert "silence" in prof.rules_by_line[key["last_heartbeat"]]
    warming = next(tp for tp in prof.templates if "warming" in tp.text)
    assert "burst" in warming.rules
    with TextSource(p) as src:  # the burst names lines from its first seconds
        assert re.match(r"2026-03-14 14:00:0\d\.\d+ DEBUG \[cache\] warming", src.line(warming.lines[0]))
    assert any("between 14:00" in w for w in warming.whys)


def test_without_timestamps_the_rules_fall_back_to_stretches_and_say_so(tmp_path):
    p = tmp_path / "untimed.log"
    write_uneven(p, timed=False)
    tc = count_templates(p)
    clock, why = clock_of(tc.block_t0, tc.block_t1)
    assert clock is None and "timestamp" in why
    picks = rate_rules(tc)
    assert picks and all("by stretches of the file, not the clock" in x.why for x in picks)


def test_a_folder_of_logs_that_overlap_in_time_has_one_clock_per_file(tmp_path):
    """api.log and auth.log cover the same hours: each file's clock runs on its own, and the
    heartbeat that auth.log stops writing at 15:00 is a silence on the clock."""
    from rlm.corpus.logset import LogSet
    from rlm.corpus.open import open_corpus

    root = tmp_path / "logs"
    root.mkdir()
    with open(root / "api.log", "w") as f:
        for k in range(6 * 1800):
            f.write(f"{_stamp(T0 + 2 * k)} INFO  [api] GET /v1/items/{k % 977} 200 {k % 90}ms\n")
    with open(root / "auth.log", "w") as f:
        for k in range(6 * 3600):
            t = T0 + k
            f.write(f"{_stamp(t)} INFO  [auth] token refreshed for client c{k % 31}\n")
            if k % 60 == 0 and t < T0 + 3 * 3600:
                f.write(f"{_stamp(t + 0.5)} INFO  [auth] heartbeat ok seq={k // 60}\n")
    c = open_corpus(str(root))
    try:
        ls = LogSet(c.sources)
        prof = profile_log(ls)
        last = max(n for n in range(1, ls.line_count + 1) if "heartbeat" in ls.line(n))
    finally:
        c.close()
    rate = [p for p in prof.picks if p.rule in ("burst", "silence", "after-quiet")]
    assert rate and not any("by stretches" in p.why for p in rate)
    [sil] = [p for p in rate if p.rule == "silence"]
    assert b"heartbeat" in sil.template and sil.lines == [last]
    assert "last at 14:59:00" in sil.why and "end of the log at 17:59:59" in sil.why


def test_the_time_rules_run_inside_a_time_window_on_its_own_clock(uneven):
    """"what happened between 15:00 and 16:00?": only the window's lines are counted, in
    small blocks with their times, and the refused burst is found on the window's clock."""
    from rlm.corpus.timewindow import parse_window, window_lines

    p, key, tc = uneven
    with TextSource(p) as src:
        ranges = window_lines(src, parse_window("between 15:00 and 16:00"))
        prof = profile_log(src, line_ranges=ranges)
    (a, b), = ranges
    assert prof.lines == b - a + 1
    [refused] = [x for x in prof.picks if x.rule == "burst" and b"refused" in x.template]
    assert re.search(r"between 15:30:0\d and 15:31:\d\d", refused.why), refused.why
    assert refused.lines and all(a <= ln <= b for x in prof.picks for ln in x.lines)
    assert key["first_refused"] <= refused.lines[0] < key["first_refused"] + 200


def test_a_syslog_without_years_runs_on_past_new_year(tmp_path):
    """Dec 31 22:00 -> Jan 1 02:00 in a format with no year: the clock moves on a year at
    midnight instead of going back (which would leave only stretches)."""
    import time

    p = tmp_path / "syslog"
    t0 = calendar.timegm((2000, 12, 31, 22, 0, 0, 0, 0, 0))

    def stamp(t):
        return time.strftime("%b %d %H:%M:%S", time.gmtime(t)).replace(" 0", "  ", 1)

    with open(p, "w") as f:
        for k in range(4 * 3600):
            t = t0 + k
            f.write(f"{stamp(t)} web01 nginx[812]: GET /v1/items/{k % 977} 200 {k % 90}ms\n")
            if t0 + 9900 <= t < t0 + 10_020:  # Jan 1 00:45:00-00:46:59, 5 a second
                for j in range(5):
                    f.write(f"{stamp(t)} web01 kernel: eth0: link down (carrier lost) #{j}\n")
    tc = count_templates(p)
    clock, why = clock_of(tc.block_t0, tc.block_t1)
    assert clock is not None, why
    assert clock.start == sorted(clock.start) and clock.span == pytest.approx(4 * 3600, abs=2)
    picks = rate_rules(tc, seen=BlockReader([p], tc).time)
    assert picks and not any("by stretches" in x.why for x in picks)
    [down] = [x for x in picks if x.rule == "burst" and b"link down" in x.template]
    assert re.search(r"between Jan 01 00:45:0\d and Jan 01 00:46:5\d", down.why), down.why
