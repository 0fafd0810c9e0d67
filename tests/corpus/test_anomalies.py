"""The "anomalies?" data: ranked event kinds, lines that report a failure, real story ids.

Lines are written here in the formats of real logs (HDFS, BGL, sshd), not copied from any set.
"""

from __future__ import annotations

import json

from rlm.corpus.anomalies import failure_lines
from rlm.corpus.source import TextSource
from rlm.corpus.templates import build_table, split_slots
from rlm.testing import run_cli


def ask(path, question="anomalies?"):
    r = run_cli("ask", str(path), question, "--json", "--model", "none")
    assert r.returncode in (0, 3), r.stderr
    return json.loads(r.stdout)


def _hdfs(tmp_path):
    lines = []
    for i in range(3000):
        t = f"081109 2{i // 600 % 10}{i // 60 % 10}{i % 60:02d}"
        lines.append(f"{t} {100 + i % 40} INFO dfs.DataNode$PacketResponder: PacketResponder "
                     f"{i % 3} for block blk_{7000 + i} terminating")
        if i % 37 == 5:
            lines.append(f"{t} {200 + i % 40} WARN dfs.DataNode$DataXceiver: 10.250.{i % 9}.7:50010:"
                         f"Got exception while serving blk_{9000 + i} to /10.251.{i % 5}.1:")
    lines.append("081109 235959 77 INFO dfs.FSNamesystem: BLOCK* ask 10.250.1.1:50010 to "
                 "replicate blk_42 to datanode(s) 10.251.2.2:50010")
    p = tmp_path / "hdfs.log"
    p.write_text("\n".join(lines) + "\n")
    return p, sum(1 for x in lines if " WARN " in x)


def test_a_common_warning_with_failure_words_leads_the_kinds_table(tmp_path):
    log, warns = _hdfs(tmp_path)
    rep = ask(log)
    assert rep["strategy"] == "profile"
    table = rep["answer"][rep["answer"].index("Event kinds picked by code"):]
    rows = [r for r in table.splitlines() if r.startswith("| 1 |") or r.startswith("| 2 |")]
    assert "exception while serving" in rows[0] and f"| WARN | {warns} |" in rows[0]
    assert "dfs.DataNode$DataXceiver: (" + str(warns) + ")" in rows[0]
    assert f"{log}:" in rows[0]  # example lines cited with path:line
    assert "replicate" in table  # the rare kind is a row too
    first = rep["event_kinds"][0]  # the same rows as data in the JSON report
    assert first["count"] == warns and first["severity"] == "WARN" and first["failure"]
    assert first["template"].endswith("exception while serving <*> to <*>")
    assert first["examples"][0]["path"] == str(log) and first["examples"][0]["line"] > 0
    assert first["where"] == [["dfs.DataNode$DataXceiver:", warns]]  # no host in HDFS headers


def _bgl(tmp_path):
    head = "- 1117838570 2005.06.03 R02-M1-N0-C:J12-U11 2005-06-03-15.42.50.675872 R02-M1-N0-C:J12-U11"
    lines = []
    for i in range(400):
        lines.append(f"{head} RAS KERNEL INFO {i % 7} ddr errors(s) detected and corrected on rank 0")
        lines.append(f"{head} RAS KERNEL INFO generating core.{1000 + i}")
        if i % 50 == 3:
            lines.append(f"{head} RAS KERNEL FATAL data TLB error interrupt")
            lines.append(f"{head} RAS KERNEL FATAL instruction address: 0x{i:08x}")
            lines.append(f"{head} RAS APP FATAL ciod: Error reading message prefix on CioStream "
                         f"socket to 172.16.96.{i % 9}:33370, Connection reset by peer")
    p = tmp_path / "bgl.log"
    p.write_text("\n".join(lines) + "\n")
    return p, lines


def test_lines_that_report_a_failure_skip_register_dumps_and_corrected_errors(tmp_path):
    log, lines = _bgl(tmp_path)
    with TextSource.open(str(log)) as src:
        got, kinds = failure_lines(build_table(src), src)
    want = [n for n, x in enumerate(lines, 1)
            if "TLB error interrupt" in x or "Error reading message prefix" in x]
    assert got == want
    assert sorted(k.template for k in kinds) == [
        "Error reading message prefix on CioStream socket to <*>, Connection reset by peer",
        "data TLB error interrupt"]


def test_error_level_alone_and_a_callers_missing_file_are_not_failures(tmp_path):
    """At ERROR a line needs failure words (a routine `[error] ... init() ok` is not one); at
    FATAL the level suffices; a reason that is the caller's error (the file it named is not
    there) is not a failure of the system, but a permission error and an I/O error are."""
    head = "- 1118193358 2005.06.07 R11-M0-NC-I:J18-U01 2005-06-07-18.15.58.583443 R11-M0-NC-I:J18-U01"
    lines = []
    for i in range(300):
        lines.append(f"{head} RAS KERNEL INFO generating core.{1000 + i}")
        if i % 30 == 1:
            lines.append(f"{head} NULL RAS MMCS ERROR idoproxydb hit ASSERT condition: ASSERT "
                         f"expression={i % 2} Source file=idotransportmgr.cpp Source line={i}")
            lines.append(f"{head} RAS APP FATAL ciod: LOGIN chdir(/p/gb2/u{i}/run) failed: "
                         "No such file or directory")
            lines.append(f"{head} RAS APP FATAL ciod: LOGIN chdir(/p/gb2/u{i}/run) failed: "
                         "Input/output error")
            lines.append(f"{head} RAS APP FATAL ciod: Error loading /p/u{i}/a.out: invalid or "
                         "missing program image, Permission denied")
            lines.append(f"{head} RAS KERNEL FATAL data storage interrupt")
    p = tmp_path / "bgl.log"
    p.write_text("\n".join(lines) + "\n")
    with TextSource.open(str(p)) as src:
        got, kinds = failure_lines(build_table(src), src)
    want = [n for n, x in enumerate(lines, 1) if "Input/output" in x or "Permission denied" in x
            or "storage interrupt" in x]
    assert got == want
    assert not any("ASSERT" in k.template or "No such file" in k.template for k in kinds)


def test_where_names_the_node_with_exact_counts(tmp_path):
    log, lines = _bgl(tmp_path)
    log.write_text("".join(x.replace("R02-M1-N0-C:J12-U11", "R30-M0-N9-C:J16-U01") + "\n"
                           if "TLB error" in x else x + "\n" for x in lines))
    rep = ask(log)
    row = next(r for r in rep["answer"].splitlines()
               if r.startswith("|") and "`data TLB error interrupt`" in r)  # the table row
    tlb = sum(1 for x in lines if "TLB error" in x)
    assert f"| FATAL | {tlb} |" in row and f"R30-M0-N9-C:J16-U01 ({tlb})" in row


def test_stories_are_never_keyed_on_a_constant_like_ssh2(tmp_path):
    lines = []
    for i in range(1200):
        lines.append(f"Dec 10 06:{i // 60 % 60:02d}:{i % 60:02d} LabSZ sshd[{2000 + i}]: Failed "
                     f"password for root from 10.0.{i % 200}.{i % 7} port {30000 + i} ssh2")
    lines[300] = ("Dec 10 06:05:00 LabSZ sshd[9001]: Accepted publickey for deploy from "
                  "10.9.9.9 port 5555 ssh2: RSA SHA256:Zx9kQ")
    lines[900] = ("Dec 10 06:15:00 LabSZ sshd[9002]: Received disconnect from 10.8.8.8 port 5 "
                  "ssh2 [preauth]")
    lines[1100] = ("Dec 10 06:18:20 LabSZ sshd[9003]: fatal: Read from socket failed ssh2 "
                   "session sess-77ab3")
    lines[1150] = ("Dec 10 06:19:10 LabSZ sshd[9003]: error: session sess-77ab3 closed by "
                   "peer while reading")
    p = tmp_path / "auth.log"
    p.write_text("\n".join(lines) + "\n")
    rep = ask(p)
    keys = [g["key"] for g in rep["groups"] if g["kind"] == "identifier"]
    assert "ssh2" not in keys and "" not in keys
    assert keys == ["sess-77ab3"]


def test_slot_values_split_without_backtracking():
    tpl = "ask <*> to delete <*> from <*> at <*> by <*>"
    assert split_slots(tpl, "ask 10.0.0.1:50010 to delete  blk_1 from  a at b by c") == (
        "10.0.0.1:50010", "blk_1", "a", "b", "c")
    hostile = "ask " + "x " * 20_000 + "to delete"  # no ` from `: the message is another event
    assert split_slots(tpl, hostile) is None
