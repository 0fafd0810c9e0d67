"""Log detection from record regularity: every real format family is a log; prose, code,
tables and transcripts are not."""

from __future__ import annotations

import pytest

from rlm.corpus.logformat import detect, header_end, is_continuation
from rlm.corpus.probe import probe_source
from rlm.corpus.source import TextSource
from rlm.fixtures.log_families import FAMILIES, family_lines, write_family
from rlm.fixtures.transcript import write_transcript

PROSE = """The committee met on Tuesday to review the proposal for the new library wing.
Several members raised concerns about the budget, which had grown since the spring estimate.
At 10:30 the chair called a short break, and discussion resumed with the question of parking.
It was agreed that a revised plan would be circulated before the next meeting in March.
Residents who wrote in were broadly supportive, although a few asked for longer opening hours.
The architect explained that the reading room would face north to avoid glare on the screens.
Nobody objected to the timeline, but the treasurer asked for monthly reports on spending.
"""

CODE = '''import logging
from datetime import datetime

log = logging.getLogger(__name__)


def handle(job):
    """Run one job and log how long it took."""
    started = datetime.now()
    try:
        result = job.run()
    except ValueError as e:
        log.error("job %s failed: %s", job.id, e)
        raise
    log.info("job %s done in %.3fs", job.id, (datetime.now() - started).total_seconds())
    return result


class Worker:
    def __init__(self, queue):
        self.queue = queue
        self.count = 0

    def loop(self):
        while True:
            job = self.queue.get()
            handle(job)
            self.count += 1
'''


def csv_rows(n: int = 300) -> str:
    rows = ["date,time,store,product,quantity,unit_price"]
    for i in range(n):
        rows.append(f"2024-03-{1 + i % 28:02d},{8 + i % 10:02d}:{i % 60:02d}:00,store-{i % 7},"
                    f"SKU-{1000 + i % 37},{1 + i % 9},{3.5 + i % 11:.2f}")
    return "\n".join(rows) + "\n"


def tsv_rows(n: int = 300) -> str:
    rows = ["id\tname\temail\tcountry"]
    rows += [f"{i}\tUser {i}\tuser{i}@example.com\t{('DE', 'FR', 'US')[i % 3]}" for i in range(n)]
    return "\n".join(rows) + "\n"


def markdown(n: int = 40) -> str:
    out = []
    for i in range(n):
        out += [f"## Section {i}", "", f"Some text about part {i} of the guide, with a few words.",
                "", "- a bullet point", "- another bullet", ""]
    return "\n".join(out)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_family_is_a_log(tmp_path, family):
    p = tmp_path / f"{family}.log"
    write_family(p, family, records=2_000)
    with TextSource(p) as src:
        pr = probe_source(src)
    assert pr.kind == "log", (family, pr.log_format)
    assert pr.log_format.is_log and pr.log_format.shape_cover >= 0.6


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_a_short_sample_of_each_family_is_a_log(family):
    assert detect(family_lines(family, records=20)).is_log


@pytest.mark.parametrize("name,text,kind", [
    ("notes.txt", PROSE * 30, {"prose"}),
    ("handler.txt", CODE * 10, {"prose", "text"}),
    ("sales.csv", csv_rows(), {"table"}),
    ("users.tsv", tsv_rows(), {"table"}),
    ("guide.md", markdown(), {"prose", "text"}),
])
def test_non_logs_are_not_logs(tmp_path, name, text, kind):
    p = tmp_path / name
    p.write_text(text)
    with TextSource(p) as src:
        pr = probe_source(src)
    assert pr.kind != "log"
    assert pr.kind in kind


def test_code_by_extension_and_transcript_by_speakers(tmp_path):
    p = tmp_path / "worker.py"
    p.write_text(CODE * 10)
    with TextSource(p) as src:
        assert probe_source(src).kind == "code"
    t = tmp_path / "meeting.txt"
    write_transcript(t, lines=2_000)
    with TextSource(t) as src:
        assert probe_source(src).kind == "transcript"


def test_timestamps_inside_prose_do_not_make_a_log():
    timed = [f"At {8 + i % 10}:{i % 60:02d} the team {w} the release notes and moved on to the next topic."
             for i, w in enumerate(["reviewed", "discussed", "rewrote", "questioned"] * 10)]
    prose = PROSE.splitlines()
    mixed = [s if i % 2 else prose[i % len(prose)] for i, s in enumerate(timed)]
    fmt = detect(mixed)
    assert not fmt.is_log  # most lines hold a time, but prose lines continue no record


@pytest.mark.parametrize("line,header", [
    ("[Sun Dec 04 04:47:44 2005] [error] mod_jk child workerEnv in error state 6", True),
    ("03-17 16:13:38.811  1702  2395 E AndroidRuntime: FATAL EXCEPTION: main", True),
    ("20171223-22:15:29:606|Step_LSC|30002312|onStandStepChanged 3579", True),
    ("1117838570 R02-M1-N0-C:J12-U11 RAS KERNEL FATAL data TLB error interrupt", True),
    ("081109 203615 148 INFO dfs.DataNode$PacketResponder: PacketResponder 1 terminating", True),
    ("<3>kernel: disk failure on sda", True),
    ("E/ActivityManager( 1234): ANR in com.example", True),
    ('{"ts": "2024-01-01T00:00:00Z", "level": "info", "msg": "ok"}', True),
    ("The quick brown fox jumps over the lazy dog.", False),
    ("\tat org.apache.hadoop.ipc.Client.call(Client.java:1475)", False),
])
def test_header_detection(line, header):
    assert bool(header_end(line)) is header


@pytest.mark.parametrize("line", [
    "\tat sun.nio.ch.SocketChannelImpl.checkConnect(Native Method)",
    "Caused by: java.io.IOException: Broken pipe",
    "\t... 7 more",
    "Traceback (most recent call last):",
    '  File "/srv/app/worker.py", line 88, in run',
    "ValueError: bad payload 1234",
    "java.net.ConnectException: Connection refused",
])
def test_stack_trace_lines_continue_a_record(line):
    assert is_continuation(line)
