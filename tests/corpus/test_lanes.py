"""Where every line of each event kind falls (rlm.corpus.lanes): bins over the log's lines and
its own clock, exact per line on small logs, per block on big ones, and honest about which."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from rlm.corpus.lanes import BINS, KEEP, KINDS_MAX, MARKS, kind_lanes, line_clock, span_record
from rlm.corpus.logset import LogSet
from rlm.corpus.source import TextSource
from rlm.corpus.templates import build_table

START = datetime(2024, 3, 5, 0, 0, 0)
BURST_AT = 10 * 3600  # 10:00: 500 disk errors in one minute
SILENT = (14 * 3600, 16 * 3600)  # 14:00-16:00: no retry warnings


def day_log(path: Path) -> dict[str, list[int]]:
    """A 24-hour log, one job line every 2 s; a retry warning every 30 s but silent from
    14:00 to 16:00; a burst of 500 disk errors in the minute from 10:00. Returns the line
    numbers of the planted kinds."""
    rows: list[tuple[int, str]] = []
    for s in range(0, 86_400, 2):
        rows.append((s, f"INFO job {s % 97} finished in {s % 13} ms"))
        if s % 30 == 0 and not SILENT[0] <= s < SILENT[1]:
            rows.append((s, f"WARN connection to db-{s % 3} failed, retrying attempt {s % 5}"))
    rows += [(BURST_AT + i * 60 // 500, f"ERROR disk failure on sda{i % 4} sector {i * 8}")
             for i in range(500)]
    rows.sort(key=lambda r: r[0])
    where: dict[str, list[int]] = {"burst": [], "retry": []}
    with path.open("w") as fh:
        for n, (s, msg) in enumerate(rows, 1):
            fh.write(f"{(START + timedelta(seconds=s)):%Y-%m-%d %H:%M:%S} {msg}\n")
            if "disk failure" in msg:
                where["burst"].append(n)
            elif "retrying" in msg:
                where["retry"].append(n)
    return where


def kind_with(table, words: str):
    return next(k for k in table.templates if words in k.template)


@pytest.fixture(scope="module")
def day(tmp_path_factory):
    path = tmp_path_factory.mktemp("day") / "day.log"
    where = day_log(path)
    src = TextSource(path)
    table = build_table(src)
    yield src, table, where
    src.close()


def _bin(seconds: float) -> int:
    return min(BINS - 1, int(seconds / 86_398 * BINS))


def test_a_burst_and_a_silence_every_line_counted(day):
    src, table, where = day
    burst, retry = kind_with(table, "disk failure"), kind_with(table, "retrying")
    rec = kind_lanes(src, table, [burst, retry])
    json.dumps(rec)  # the report carries it as JSON
    assert rec["time"]["first_seen"] == "2024-03-05 00:00:00"
    assert rec["time"]["last_seen"] == "2024-03-05 23:59:58"
    b, r = rec["kinds"][str(burst.id)], rec["kinds"][str(retry.id)]
    assert b["placed"] == r["placed"] == "lines"
    assert sum(b["time_bins"]) == sum(b["line_bins"]) == b["count"] == len(where["burst"]) == 500
    assert sum(r["time_bins"]) == r["count"] == len(where["retry"]) == retry.count
    # the burst: one minute of a day falls in one or two bins of 7.2 min, around 10:00
    full = [i for i, n in enumerate(b["time_bins"]) if n]
    assert set(full) <= {_bin(BURST_AT), _bin(BURST_AT + 60)}, full
    # the silence: empty bins from 14:00 to 16:00, and none empty elsewhere
    empty = {i for i, n in enumerate(r["time_bins"]) if not n}
    inside = set(range(_bin(SILENT[0]) + 1, _bin(SILENT[1])))
    assert inside <= empty and len(empty - inside) <= 2, sorted(empty - inside)
    # by line: the retry lines' bins follow their line numbers exactly
    expect = [0] * BINS
    for ln in where["retry"]:
        expect[(ln - 1) * BINS // src.line_count] += 1
    assert r["line_bins"] == expect


def test_few_lines_are_kept_each_with_its_time(day):
    src, table, _ = day
    rare = [k for k in table.templates if k.count <= MARKS]
    assert not rare  # this log has none: make one from a copy of the burst's first lines
    path = Path(src.path).with_name("few.log")
    text = Path(src.path).read_text().splitlines(keepends=True)
    keep = [ln for ln in text if "disk failure" not in ln]
    keep.insert(1000, "2024-03-05 00:33:20 FATAL kernel panic on node-7\n")
    path.write_text("".join(keep))
    with TextSource(path) as few:
        t = build_table(few)
        panic = kind_with(t, "kernel panic")
        rec = kind_lanes(few, t, [panic])
        marks = rec["kinds"][str(panic.id)]["marks"]
        assert [m[0] for m in marks] == [1001]
        assert marks[0][1] - rec["time"]["first"] == 2000  # 00:33:20: its own time


def test_big_logs_are_placed_by_block_and_say_so(day):
    """Past the size for one more pass, each kind's count per block (the counter's series)
    places it: counts still exact, places to the block."""
    src, table, _ = day
    burst, retry = kind_with(table, "disk failure"), kind_with(table, "retrying")
    rec = kind_lanes(src, table, [burst, retry], exact_max_bytes=0)
    b, r = rec["kinds"][str(burst.id)], rec["kinds"][str(retry.id)]
    assert rec["placed"] == b["placed"] == r["placed"] == "blocks"
    assert b["count"] == 500 and r["count"] == retry.count
    blocks = len(table.counter.block_line)
    near = 86_400 / blocks * 1.5  # a block's share of the day, and a half
    full = [i for i, n in enumerate(b["time_bins"]) if n]
    assert all(abs(i * 86_400 / BINS - BURST_AT) <= near for i in full), (full, near)
    empty = {i for i, n in enumerate(r["time_bins"]) if not n}
    assert _bin((SILENT[0] + SILENT[1]) / 2) in empty


def test_examples_only_when_nothing_else_is_known(day, monkeypatch):
    src, table, _ = day
    retry = kind_with(table, "retrying")
    monkeypatch.setattr(table.counter, "series_overflow", True)  # the counter's cap was hit
    rec = kind_lanes(src, table, [retry], exact_max_bytes=0)
    lane = rec["kinds"][str(retry.id)]
    assert lane["placed"] == "examples" and lane["count"] == retry.count
    assert [m[0] for m in lane["marks"]] == retry.examples[:KEEP]


def test_no_readable_times_no_clock(tmp_path):
    path = tmp_path / "plain.log"
    path.write_text("".join(f"worker {i % 7} finished task {i}\n" for i in range(3000)))
    with TextSource(path) as src:
        clock, why = line_clock(src)
        assert clock is None and why == "this log has no readable times"
        table = build_table(src)
        rec = kind_lanes(src, table, table.templates)
        assert rec["time"] is None and rec["no_time"] == why
        assert all("time_bins" not in v for v in rec["kinds"].values())


def test_a_yearless_log_past_new_year_keeps_its_clock(tmp_path):
    path = tmp_path / "syslog"
    t = datetime(2000, 12, 31, 20, 0, 0)
    path.write_text("".join(f"{(t + timedelta(minutes=i)):%b %d %H:%M:%S} host sshd[{i}]: "
                            f"Accepted key for user{i % 3}\n" for i in range(600)))
    with TextSource(path) as src:
        clock, why = line_clock(src)
        assert clock is not None, why
        assert clock.last - clock.first == pytest.approx(599 * 60)
        assert clock.first_seen == "Dec 31 20:00:00" and clock.last_seen == "Jan 01 05:59:00"


def test_a_folder_numbers_lines_one_file_after_another(tmp_path):
    a, b = tmp_path / "a.log", tmp_path / "b.log"
    a.write_text("".join(f"2024-01-01 10:{i // 60:02d}:{i % 60:02d} INFO tick {i}\n"
                         for i in range(1200)))
    b.write_text("".join(f"2024-01-01 12:{i // 60:02d}:{i % 60:02d} ERROR disk sda failed {i}\n"
                         for i in range(300)))
    srcs = [TextSource(a), TextSource(b)]
    try:
        logs = LogSet(srcs)
        table = build_table(logs)
        failed = kind_with(table, "failed")
        rec = kind_lanes(logs, table, [failed])
        lane = rec["kinds"][str(failed.id)]
        assert [f["lines"] for f in rec["files"]] == [1200, 300]
        assert sum(lane["line_bins"][:160]) == 0 and sum(lane["line_bins"][160:]) == 300
        assert rec["time"]["first_seen"] == "2024-01-01 10:00:00"
        assert rec["time"]["last_seen"] == "2024-01-01 12:04:59"
    finally:
        for s in srcs:
            s.close()


def test_the_span_of_a_log_without_kinds(day, tmp_path):
    """A search or a count: only the log's first and last time, read at each file's ends; a
    folder whose files do not share a clock (a year in one, none in the other) has none."""
    src, _, _ = day
    rec = span_record(src)
    assert rec["kinds"] == {} and rec["lines"] == src.line_count
    assert (rec["time"]["first_seen"], rec["time"]["last_seen"]) == ("2024-03-05 00:00:00",
                                                                     "2024-03-05 23:59:58")
    dated, plain = tmp_path / "a.log", tmp_path / "b.log"
    dated.write_text("2024-01-01 10:00:00 INFO up\n2024-01-01 10:05:00 INFO down\n")
    plain.write_text("Jan  1 10:00:00 host sshd[1]: up\nJan  1 10:09:00 host sshd[2]: down\n")
    srcs = [TextSource(dated), TextSource(plain)]
    try:
        both = span_record(LogSet(srcs))
        assert both["time"] is None and both["no_time"]
        assert span_record(srcs[1])["time"]["last_seen"] == "Jan  1 10:09:00"
    finally:
        for x in srcs:
            x.close()


def test_the_record_keeps_the_first_kinds_only(tmp_path):
    """However many kinds a log has, the record (and the page's lanes) holds the first
    KINDS_MAX of the ranking; the page says how many of how many it draws."""
    from itertools import product

    from rlm.render.html import report_html

    words = ["".join(w) for w in product("bcdfghjklm", repeat=3)][:KINDS_MAX + 50]
    path = tmp_path / "many.log"
    n = len(words)  # messages that share no word at any place: one kind each
    path.write_text("".join(f"2024-01-01 10:{i // 60 % 60:02d}:{i % 60:02d} ERROR "
                            + " ".join(words[(i + p * 61) % n] for p in range(4)) + "\n"
                            for i in range(n)))
    with TextSource(path) as src:
        table = build_table(src)
        assert len(table.templates) == len(words)
        rec = kind_lanes(src, table, table.templates)
    assert list(rec["kinds"]) == [str(k.id) for k in table.templates[:KINDS_MAX]]
    rep = {"command": "ask", "question": "anomalies?", "corpus": {"path": "many.log"},
           "event_kinds": [{"id": k.id, "template": k.template, "count": 1,
                            "examples": [{"path": "many.log", "line": k.first_line, "text": ""}]}
                           for k in table.templates], "timeline": rec}
    page = report_html(rep)
    assert page.count('class="lane"') == KINDS_MAX
    assert f"The first {KINDS_MAX} of {len(words)} kinds are drawn" in page


def test_a_big_log_clock_reads_indexed_lines_by_plain_reads(tmp_path):
    """On a big file the clock samples lines the sampled index knows, read with a plain read:
    4,096 samples through the mmap left 300 MB of a 500 MB log resident (read-around)."""
    from rlm.corpus.line_offsets import STEP

    p = tmp_path / "app.log"
    t0 = datetime(2026, 3, 14, 8, 0, 0)
    p.write_text("".join(f"{(t0 + timedelta(seconds=i)).isoformat()} INFO request {i} served\n"
                         for i in range(5000)))
    src = TextSource(p)
    assert src.sampled_lines(2, 3) is None  # not an indexed line: the caller reads it as before
    for n in (1, 1 + STEP, 1 + 77 * STEP):
        assert src.sampled_lines(n, 3) == src.lines(n, n + 2)
    assert src.sampled_lines(1 + 78 * STEP, 8) == src.lines(1 + 78 * STEP, 5000)  # to the end
    clock, why = line_clock(src, fine=64)  # 5,000 lines > 64 samples x STEP: the grid
    assert why == "" and clock is not None
    assert all((ln - 1) % STEP == 0 for ln in clock.lines[:-1]), clock.lines
    assert clock.lines[-1] == 5000
    assert [clock.at(np.asarray([ln]))[0] - clock.first for ln in clock.lines] == [
        float(ln - 1) for ln in clock.lines]
