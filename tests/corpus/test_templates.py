"""The template table: header parsing, variables with and without digits, `rlm templates`.

Lines are written here in the formats of real logs (syslog/sshd, Apache, HDFS, BGL, logcat,
ZooKeeper, Windows CBS, Proxifier), not copied from any data set.
"""

from __future__ import annotations

import json

import pytest

from rlm.corpus.header import message_start, split_header
from rlm.corpus.mask import MASK_RE
from rlm.corpus.source import TextSource
from rlm.corpus.templates import build_table
from rlm.testing import run_cli


def rlm(*args):
    return run_cli(*args)


def masked(line: str) -> str:
    return MASK_RE.sub(b"#", line.encode()).decode()


@pytest.mark.parametrize("line, message, level, component", [
    ("Dec 10 06:55:46 LabSZ sshd[24200]: Invalid user admin from 1.2.3.4",
     "Invalid user", None, "sshd[#]:"),
    ("[Sun Dec 04 04:47:44 2005] [error] mod_jk child workerEnv in error state 6",
     "mod_jk child", "error", None),
    ("081109 203615 148 INFO dfs.DataNode$PacketResponder: PacketResponder 1 for block blk_1",
     "PacketResponder 1", "INFO", "dfs.DataNode$PacketResponder:"),
    (("- 1117838570 2005.06.03 R02-M1-N0-C:J12-U11 2005-06-03-15.42.50.675872 R02-M1-N0-C:J12-U11"
     " RAS KERNEL FATAL data TLB error interrupt"), "data TLB", "FATAL", "RAS KERNEL"),
    ("03-17 16:13:38.811  1702  2395 E WindowManager: Failure taking screenshot",
     "Failure taking", "E", "WindowManager:"),
    (("2015-07-29 17:41:44,747 - WARN  [QuorumPeer[myid=1]/0:0:0:0:0:0:0:0:2181:Learner@233] - "
     "Exception when following the leader"), "Exception when", "WARN", None),
    ("2016-09-28 04:30:30, Info                  CBS    Loaded Servicing Stack v6.1",
     "CBS    Loaded", "Info", None),
    ("[10.30 16:49:06] chrome.exe - proxy.example.org:5070 open through proxy", "proxy.example",
     None, "chrome.exe"),
    (("2015-10-18 18:01:47,978 INFO [RMCommunicator Allocator] org.apache.hadoop.Client: "
     "Address change detected"), "Address change", "INFO", "org.apache.hadoop.Client:"),
])
def test_header_is_parsed_apart_in_common_formats(line, message, level, component):
    head = split_header(masked(line))
    assert line[message_start(line):].strip().startswith(message)
    assert head.level == level
    assert head.component == component


def _write(path, lines):
    path.write_text("\n".join(lines) + "\n")
    return path


def _sshd_log(tmp_path):
    users = ["admin", "oracle", "test", "guest", "alice", "postgres"]
    lines = []
    for i in range(60):
        u = users[i % len(users)]
        ip = f"10.0.{i % 7}.{i}"
        t = f"Dec 10 06:{i // 60:02d}:{i % 60:02d}"
        lines.append(f"{t} LabSZ sshd[{2000 + i}]: Invalid user {u} from {ip}")
        lines.append(f"{t} LabSZ sshd[{2000 + i}]: Failed password for invalid user {u} from {ip} "
                     f"port {40000 + i} ssh2")
        lines.append(f"{t} LabSZ sshd[{3000 + i}]: pam_unix(sshd:session): session "
                     f"{'opened' if i % 2 else 'closed'} for user root")
    lines.append("Dec 10 07:01:00 LabSZ sshd[9999]: fatal: Write failed: Connection reset by peer")
    return _write(tmp_path / "auth.log", lines)


def _by_template(out: dict) -> dict[str, dict]:
    return {t["template"]: t for t in out["templates"]}


def test_usernames_are_variables_and_two_words_are_two_events(tmp_path):
    r = rlm("templates", str(_sshd_log(tmp_path)), "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    got = _by_template(out)
    assert got["Invalid user <*> from <*>"]["count"] == 60
    assert got["Failed password for invalid user <*> from <*> port <*> ssh2"]["count"] == 60
    # opened/closed: two plain words are two events, not one event with a slot
    assert got["pam_unix(sshd:session): session opened for user root"]["count"] == 30
    assert got["pam_unix(sshd:session): session closed for user root"]["count"] == 30
    fatal = got["fatal: Write failed: Connection reset by peer"]
    assert fatal["count"] == 1 and fatal["first_line"] == fatal["last_line"] == 181
    assert "failed" in fatal["failure_words"]
    assert out["lines"] == 181 and sum(t["count"] for t in out["templates"]) == 181
    assert [t["id"] for t in out["templates"]] == list(range(1, len(out["templates"]) + 1))


def test_day_and_month_names_do_not_split_an_event(tmp_path):
    days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    lines = [f"[{days[i % 7]} Dec {4 + i % 7:02d} 04:47:{i % 60:02d} 2005] [notice] "
             f"jk2_init() Found child {100 + i} in scoreboard slot {i % 9}" for i in range(21)]
    lines += [f"Jul {1 + i} 12:16:51 combo ftpd[{500 + i}]: connection from 1.2.3.{i} () at "
              f"{days[i % 7]} Jul {1 + i} 12:16:51 2005" for i in range(7)]
    r = rlm("templates", str(_write(tmp_path / "mixed.log", lines)), "--json")
    got = _by_template(json.loads(r.stdout))
    # a token with a digit is a value to the mask; `jk2_init`, the same on every line, is
    # put back as a word of the template (rlm/corpus/constants.py): one event all the same
    assert got["jk2_init() Found child <*> in scoreboard slot <*>"]["count"] == 21
    assert got["jk2_init() Found child <*> in scoreboard slot <*>"]["level"] == "notice"
    assert sum(t["count"] for t in got.values() if t["template"].startswith("connection from")) == 7
    assert len(got) == 2, list(got)


def test_the_most_varied_position_is_the_variable_not_the_word_beside_it(tmp_path):
    """dpkg.log's `status <state> <package> <version>`: each package goes through the states,
    so both positions vary; the package (many values) is the variable, the state (a handful of
    words) stays the event. Merging the leftmost position first made one kind per package."""
    states = ["half-installed", "unpacked", "half-configured", "installed"]  # no digits: words
    pkgs = [f"{name}:all" for name in ("media-types", "netbase", "readline-common", "tzdata",
                                       "sensible-utils", "debconf", "ucf", "adduser")]
    lines = [f"2026-05-09 07:{i:02d}:{j:02d} status {st} {p} {i}.{j}-1"
             for i, p in enumerate(pkgs) for j, st in enumerate(states)]
    got = _by_template(json.loads(rlm("templates", str(_write(tmp_path / "dpkg.log", lines)),
                                      "--json").stdout))
    assert {t: k["count"] for t, k in got.items()} == {
        f"status {st} <*> <*>": len(pkgs) for st in states}


def test_values_that_vary_together_are_variables(tmp_path):
    """No two lines are equal but one word (user, file, tool and host all change together):
    the columns still show four variables beside three constant words."""
    names = ["alba", "bruno", "chen", "dara", "emil", "farah", "gus", "hana", "ivo", "jun",
             "kofi", "lena", "mo", "nils", "oona", "pia", "quinn", "rui", "sven", "tove"]
    lines = [f"2024-01-01 00:00:{i % 60:02d} INFO [main] app.Svc: user {names[i % 20]} opened "
             f"{names[(i * 3 + 1) % 20]}doc with {names[(i * 7 + 2) % 20]}tool and "
             f"{names[(i * 11 + 5) % 20]}host" for i in range(40)]
    lines.append("2024-01-01 00:01:00 ERROR [main] app.Svc: user store unreachable")
    out = json.loads(rlm("templates", str(_write(tmp_path / "svc.log", lines)), "--json").stdout)
    got = _by_template(out)
    assert got["user <*> opened <*> with <*> and <*>"]["count"] == 40
    assert got["user store unreachable"]["count"] == 1 and len(got) == 2


def test_assign_writes_one_id_per_line_matching_the_table(tmp_path):
    log = _sshd_log(tmp_path)
    dest = tmp_path / "ids.txt"
    r = rlm("templates", str(log), "--json", "--assign", str(dest))
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    ids = [int(x) for x in dest.read_text().split()]
    assert len(ids) == 181 and 0 not in ids
    for t in out["templates"]:
        lines = [n for n, i in enumerate(ids, 1) if i == t["id"]]
        assert len(lines) == t["count"]
        assert lines[0] == t["first_line"] and lines[-1] == t["last_line"]


def test_text_table_names_counts_lines_and_times(tmp_path):
    r = rlm("templates", str(_sshd_log(tmp_path)))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("5 event kinds in 181 lines")
    assert "Invalid user <*> from <*>" in r.stdout
    assert "lines 1-178, Dec 10 06:00:00 .. Dec 10 06:00:59" in r.stdout
    assert "line 181, Dec 10 07:01:00" in r.stdout


def test_last_line_and_slot_values_across_many_blocks(tmp_path):
    """A file of many read blocks: the last sighting is found in its own block, and group-by
    values come from the raw lines."""
    lines = []
    for i in range(40_000):
        lines.append(f"2024-01-01 00:{i // 1000 % 60:02d}:{i % 60:02d},000 INFO [main] "
                     f"app.Server: served request {i} for user u{i % 3}x in {i % 50} ms")
        if i in (5, 20_000):
            lines.append(f"2024-01-01 00:00:{i % 60:02d},500 ERROR [main] app.Db: connection "
                         f"refused by db-{i % 2}")
    log = _write(tmp_path / "app.log", lines)
    with TextSource.open(str(log)) as src:
        table = build_table(src)
        assert len(table.counter.block_line) > 8  # really several blocks
        kinds = {k.template: k for k in table.templates}
        err = kinds["connection refused by <*>"]
        assert (err.count, err.first_line, err.last_line) == (2, 7, 20_003)
        assert err.rank == 3 and err.level == "ERROR" and err.severity == "error"
        assert err.components == [("app.Db:", 2)]
        served = kinds["served request <*> for user <*> in <*> ms"]
        assert served.count == 40_000 and served.last_line == 40_002
        values = table.slot_values(src, err.id)
        assert values == [(7, ("db-1",)), (20_003, ("db-0",))]


def test_a_folder_is_one_table_with_each_line_in_its_file(tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    lines = _sshd_log(tmp_path).read_text().splitlines()
    (folder / "a.log").write_text("\n".join(lines[:100]) + "\n")
    (folder / "b.log").write_text("\n".join(lines[100:]) + "\n")
    out = json.loads(rlm("templates", str(folder), "--json").stdout)
    assert out["paths"] == ["a.log", "b.log"] and out["lines"] == 181
    fatal = _by_template(out)["fatal: Write failed: Connection reset by peer"]
    assert fatal["first_line"] == 181 and fatal["first"] == {"path": "b.log", "line": 81}
    invalid = _by_template(out)["Invalid user <*> from <*>"]
    assert invalid["first"] == {"path": "a.log", "line": 1}
    assert invalid["last"] == {"path": "b.log", "line": 178 - 100}


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    r = rlm("templates", str(tmp_path / "nope.log"))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().startswith("rlm:") and len(r.stderr.strip().splitlines()) == 1
    log = _sshd_log(tmp_path)
    r = rlm("templates", str(log), "--assign", str(tmp_path / "no-such-dir" / "ids.txt"))
    assert r.returncode == 2 and "cannot write" in r.stderr and "Traceback" not in r.stderr


def test_table_for_gives_kind_rows_and_every_line_of_chosen_rows(tmp_path):
    """The matcher's interface (rlm.strategies.counting): rows commonest first, then every
    line of the chosen kinds in file order, within a window's ranges when given."""
    from rlm.corpus.templates import table_for

    log = _sshd_log(tmp_path)
    with TextSource.open(str(log)) as src:
        t = table_for(src)
        rows = [r for r in t.rows if r.text.startswith("Failed password")]
        assert [r.count for r in rows] == [60]
        got = list(t.lines_of(rows))
        assert [n for n, _, _ in got] == list(range(2, 180, 3))
        assert all("Failed password" in text for _, text, _ in got)
        window = table_for(src, [(10, 30)])
        rows = [r for r in window.rows if r.text.startswith("Failed password")]
        assert sum(r.count for r in rows) == 7
        assert [n for n, _, _ in window.lines_of(rows)] == list(range(11, 30, 3))
