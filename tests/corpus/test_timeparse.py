"""The table of timestamp formats: one real line per format, parsed to the log's clock."""

from __future__ import annotations

import calendar

import pytest

from rlm.pipeline.codeonly.timeline import timestamp, when
from rlm.corpus.timeparse import YEARLESS, line_format, line_time, parser_for
from rlm.fixtures.log_families import FAMILIES, family_lines


def ts(y, mo, d, h, mi, s, frac=0.0):
    return calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0)) + frac


@pytest.mark.parametrize("line,fmt,want", [
    ("2026-03-14T08:00:00.065Z INFO  [checkout] req=c3c6f54a POST /v1/cart", "iso", ts(2026, 3, 14, 8, 0, 0, 0.065)),
    ("2015-10-18 18:01:47,978 INFO [main] org.apache.hadoop.mapreduce", "iso", ts(2015, 10, 18, 18, 1, 47, 0.978)),
    ("2016-09-28 04:30:30, Info                  CBS    Loaded Servicing Stack", "iso", ts(2016, 9, 28, 4, 30, 30)),
    # Debian's /var/log/alternatives.log: the program first, a colon right after the seconds
    ("update-alternatives 2025-06-24 14:36:53: link group pager updated to point to /usr/bin/less", "iso", ts(2025, 6, 24, 14, 36, 53)),
    ("nova-api.log.1.2017-05-16_13:53:08 2017-05-16 00:00:00.008 25746 INFO nova", "iso", ts(2017, 5, 16, 0, 0, 0, 0.008)),
    ("[Sun Dec 04 04:47:44 2005] [error] mod_jk child workerEnv in error state 6", "apache", ts(2005, 12, 4, 4, 47, 44)),
    ('10.0.0.1 - - [10/Oct/2000:13:55:36 -0700] "GET /a.gif HTTP/1.0" 200 2326', "clf", ts(2000, 10, 10, 13, 55, 36)),
    ("17/06/09 20:10:40 INFO executor.CoarseGrainedExecutorBackend: Registered", "spark", ts(2017, 6, 9, 20, 10, 40)),
    ("081109 203615 148 INFO dfs.DataNode$PacketResponder: PacketResponder 1", "hdfs", ts(2008, 11, 9, 20, 36, 15)),
    ("20171223-22:15:29:606|Step_LSC|30002312|onStandStepChanged 3579", "healthapp", ts(2017, 12, 23, 22, 15, 29, 0.606)),
    ("Jun 14 15:16:01 combo sshd(pam_unix)[19939]: authentication failure;", "syslog", ts(YEARLESS, 6, 14, 15, 16, 1)),
    ("Jul  1 09:00:55 calvisitor-10-105-160-95 kernel[0]: IOThunderboltSwitch", "syslog", ts(YEARLESS, 7, 1, 9, 0, 55)),
    ("03-17 16:13:38.811  1702  2395 D WindowManager: printFreezingDisplayLogs", "logcat", ts(YEARLESS, 3, 17, 16, 13, 38, 0.811)),
    ("[10.30 16:49:06] chrome.exe - proxy.cse.cuhk.edu.hk:5070 open through", "proxifier", ts(YEARLESS, 10, 30, 16, 49, 6)),
    # BGL writes an epoch and its own clock: the written clock wins (times shown as written)
    ("- 1117838570 2005.06.03 R02-M1-N0-C:J12-U11 2005-06-03-15.42.50.675872 R02", "bgl", ts(2005, 6, 3, 15, 42, 50, 0.675872)),
    ("1480000000.123 node05 lustre: client reconnected", "epoch", 1480000000.123),
    ('{"ts": 1480000000123, "level": "info"}', "json:epoch_ms", 1480000000.123),
    ("134681 node-246 unix.hw state_change.unavailable 1077804742 1 Component", "epoch", 1077804742.0),
    ("2005-06-03-15.42.50.675872 R02-M1-N0 RAS KERNEL INFO", "bgl", ts(2005, 6, 3, 15, 42, 50, 0.675872)),
    ("2016/09/28 04:30:30 something happened", "slash_ymd", ts(2016, 9, 28, 4, 30, 30)),
    # ISO 8601 with a zone: the printed clock is the log's clock (the zone is not applied)
    ("2026-03-14T14:05:09+02:00 api ERROR upstream timeout", "iso", ts(2026, 3, 14, 14, 5, 9)),
    ("2026-03-14T14:05:09.250-0700 api ERROR upstream timeout", "iso", ts(2026, 3, 14, 14, 5, 9, 0.25)),
    ("[2026-03-14 14:05] deploy started", "iso", ts(2026, 3, 14, 14, 5, 0)),
    ("2015-07-29 17:41:44,747 - WARN  [SendWorker:2:QuorumCnxManager$SendWorker@679] - x", "iso", ts(2015, 7, 29, 17, 41, 44, 0.747)),
    ("Dec 10 06:55:46 LabSZ sshd[24200]: Invalid user webmaster from 173.234.31.186", "syslog", ts(YEARLESS, 12, 10, 6, 55, 46)),
    # Thunderbird: label, epoch, date, node, then a syslog time -- the written clock wins
    ("- 1131566461 2005.11.09 dn228 Nov 9 12:01:01 dn228/dn228 crond(pam_unix)[2915]: session closed", "syslog", ts(YEARLESS, 11, 9, 12, 1, 1)),
    # JSON lines: the time field, wherever it is in the record
    ('{"ts": "2024-01-01T00:00:00.500Z", "level": "error", "msg": "reset"}', "json:iso", ts(2024, 1, 1, 0, 0, 0, 0.5)),
    ('{"level": "info", "msg": "' + "x" * 150 + '", "time": "2024-01-01T10:11:12Z"}', "json:iso", ts(2024, 1, 1, 10, 11, 12)),
    ('{"@timestamp": "2024-01-01 10:11:12,003", "message": "ok"}', "json:iso", ts(2024, 1, 1, 10, 11, 12, 0.003)),
    ('{"msg": "job 1700000000 done", "time": 1480000000}', "json:epoch", 1480000000.0),
    ("2026-13-45 10:00:00 not a date", "iso", None),
    ("The quick brown fox", None, None),
])
def test_format_table(line, fmt, want):
    assert line_format(line) == fmt
    assert parser_for([line] * 3)(line) == line_time(line)  # the per-log fast path agrees
    got = line_time(line)
    assert (got is None) if want is None else got == pytest.approx(want, abs=1e-3)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_family_has_increasing_times(family):
    """Every generated family parses, and in order (the generator's clock only moves on)."""
    lines = [s for s in family_lines(family, 200) if not s.startswith(("\t", " ", "Caused",
                                                                       "java.", "Traceback",
                                                                       "ValueError"))]
    times = [line_time(s) for s in lines]
    assert all(t is not None for t in times), [s for s, t in zip(lines, times) if t is None][:2]
    assert times == sorted(times) or family in ("hpc",)  # HPC's epoch is the 5th field only


@pytest.mark.parametrize("line,said", [
    ("[Sun Dec 04 04:47:44 2005] [error] mod_jk child workerEnv in error state 6", "04:47:44 on Dec 04 2005"),
    ("03-17 16:13:38.811  1702  2395 D WindowManager: printFreezingDisplayLogs", "16:13:38 on Mar 17"),
    ("081109 203615 148 INFO dfs.DataNode$PacketResponder: PacketResponder 1", "20:36:15 on Nov 09 2008"),
    ("[10.30 16:49:06] chrome.exe - proxy.cse.cuhk.edu.hk:5070 open through", "16:49:06 on Oct 30"),
    ("20171223-22:15:29:606|Step_LSC|30002312|onStandStepChanged 3579", "22:15:29 on Dec 23 2017"),
    ("no time here", "?"),
])
def test_code_timelines_read_times_with_the_same_table(line, said):
    """rlm/pipeline/codeonly/timeline.py has no parser of its own: every format above reaches it."""
    assert when(timestamp(line)) == said
