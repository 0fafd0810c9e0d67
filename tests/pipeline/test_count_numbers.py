"""Numbers and literal tokens in count questions are part of what is counted (rlm.corpus.literals
read by rlm.pipeline.query): "how many status 404 lines?" counts the lines holding `status: 404`,
not every line holding `status`. A number that is a threshold, a rank, a range or a duration is
not a predicate word: code says it is not sure (exit 3) and gives no number.

The CLI tests run on LogHub's real lines (evals/data/loghub/*_head.log, copied with its licence);
the expected numbers are counted here as grep counts them (`grep -c "status: 404"`)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rlm.pipeline.query import read_query
from rlm.testing import run_cli

LOGHUB = Path(__file__).resolve().parents[2] / "evals" / "data" / "loghub"


def ask(path: Path, question: str, code: int = 0) -> dict:
    r = run_cli("ask", str(path), question, "--json", "--model", "none")
    assert r.returncode == code, (r.returncode, r.stderr[-2000:], r.stdout[-2000:])
    return json.loads(r.stdout)


def grep_c(path: Path, rx: str) -> int:
    """Lines holding rx, as `grep -cE` counts them."""
    return sum(bool(re.search(rx, s)) for s in path.read_text().splitlines())


@pytest.fixture(scope="module")
def openstack(tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("openstack") / "nova-api.log"
    p.write_bytes((LOGHUB / "OpenStack_head.log").read_bytes())
    return p


# -- reading the question ---------------------------------------------------------------------

@pytest.mark.parametrize("question, key, value", [
    ("how many status 404 lines?", "status", "404"),
    ("count lines with status 200", "status", "200"),
    ("how many lines have status: 200?", "status", "200"),
    ("how many lines mention status: 404?", "status", "404"),
    ("how many failed passwords on port 22?", "port", "22"),
])
def test_a_number_after_a_word_is_that_words_value(question, key, value):
    q = read_query(question)
    assert q.kind == "count" and not q.unsure
    assert [(lit.key, lit.values) for lit in q.literals] == [(key, [value])]
    assert key not in q.words  # the key is the literal's, not a template word of its own


def test_a_value_is_a_whole_token_joined_to_its_key_as_logs_write_fields():
    (lit,) = read_query("how many lines with port 22?").literals
    rx = re.compile(lit.pattern())
    assert rx.search("Accepted password for root from 10.0.0.1 port 22 ssh2")
    assert rx.search("listen port=22 proto=tcp") and rx.search('"port": 22,')
    assert not rx.search("Failed password for root from 10.0.0.1 port 2222 ssh2")
    assert not rx.search("port 22.5") and not rx.search("22 failed logins on port 80")
    (uid,) = read_query("how many lines with uid=0?").literals
    line = ("Jun 14 15:16:01 combo sshd(pam_unix)[19939]: authentication failure; logname= "
            "uid=0 euid=0 tty=NODEVssh ruser= rhost=218.188.2.4")
    assert re.compile(uid.pattern()).search(line)
    assert not re.compile(uid.pattern()).search(line.replace(" uid=0", " uid=500"))


def test_a_port_is_also_the_number_after_an_address():
    (lit,) = read_query("how many lines on port 50010?").literals
    rx = re.compile(lit.pattern())
    assert rx.search("081109 204005 35 INFO dfs.FSNamesystem: BLOCK* NameSystem.addStoredBlock: "
                     "blockMap updated: 10.251.73.220:50010 is added to blk_7128370237687728475")
    assert rx.search("Address change detected. Old: msra-sa-41/10.190.173.170:50010 New: "
                     "msra-sa-41:50010") and rx.search("listening on port 50010")
    assert not rx.search("Jun 14 15:16:50010") and not rx.search("10.0.0.1:500100")
    assert not rx.search("code:50010")  # a bare word before the colon is no address
    assert lit.label() == "`port 50010` or `<address>:50010`"


def test_a_pid_is_also_the_number_in_brackets_and_a_sign_bounds_nothing():
    (pid,) = read_query("how many lines with pid 24200?").literals
    rx = re.compile(pid.pattern())
    assert rx.search("Dec 10 06:55:46 LabSZ sshd[24200]: Invalid user webmaster")
    assert not rx.search("Dec 10 06:55:46 LabSZ sshd[242001]: Invalid user webmaster")
    (port,) = read_query("how many lines with :3888?").literals  # the log: `10.10.34.11:3888:`
    assert re.search(port.pattern(), "[/10.10.34.11:3888:QuorumCnxManager$Listener@493]")
    assert not re.search(port.pattern(), "10.10.34.11:38880")


def test_and_joins_two_literals_but_not_a_bare_number():
    q = read_query("how many lines with uid=0 and euid=0?")
    assert [lit.values for lit in q.literals] == [["uid=0"], ["euid=0"]] and not q.unsure
    q = read_query("how many lines with status 404 and 500?")
    assert q.unsure and "both or either" in q.unsure[0]


def test_values_joined_by_or_are_alternatives_of_one_key():
    (lit,) = read_query("how many lines with status 404 or 500?").literals
    assert (lit.key, lit.values) == ("status", ["404", "500"])
    rx = re.compile(lit.pattern())
    assert rx.search("status: 500 len: 1") and not rx.search("status: 200 len: 500")


@pytest.mark.parametrize("question, number", [
    ("which IPs had fewer than 10 failed passwords?", "10"),
    ("how many requests took more than 0.3 seconds?", "0.3"),
    ("how many lines with at least 3 failures?", "3"),
    ("how many errors in the last 5 minutes?", "5"),
    ("when was the last 404 error?", "404"),
    ("how many lines between 400 and 499?", "400"),
    ("how many 404 errors?", "404"),
    ("how many lines per hour with status 404", "404"),
    ("how many requests with 200+ ms?", "200"),
])
def test_a_threshold_rank_range_or_unclear_number_is_not_a_predicate_word(question, number):
    q = read_query(question)
    if q.kind in ("count", "top", "list"):
        assert q.unsure and any(number in why for why in q.unsure), q.unsure
        assert q.counts  # the count strategy takes it, and says it is not sure
    assert all(number not in lit.values for lit in q.literals)


def test_a_rank_that_code_reads_is_the_k_not_a_literal():
    q = read_query("top 3 ips with status 404")
    assert (q.kind, q.top_k, q.group_by) == ("top", 3, "ip") and not q.unsure
    assert [lit.values for lit in q.literals] == [["404"]]
    q = read_query("what are the 5 most common errors?")
    assert q.top_k == 5 and not q.literals and not q.unsure


# -- answers on real lines, through the CLI ---------------------------------------------------

@pytest.mark.parametrize("question, rx", [
    ("how many status 404 lines?", r"status: 404\b"),
    ("count lines with status 200", r"status: 200\b"),
    ("how many lines have status: 200?", r"status: 200\b"),
])
def test_the_three_numbers_are_greps(openstack, question, rx):
    want = grep_c(openstack, rx)
    assert 0 < want < grep_c(openstack, r"status")  # the number narrows the count
    rep = ask(openstack, question)
    assert rep["strategy"] == "count"
    assert rep["matched"]["total"] == want
    shown = rx.replace(r"\b", "")
    assert rep["answer"].startswith(f"**{want:,}** line{'s' if want != 1 else ''} holding "
                                    f"`{shown}`"), rep["answer"][:200]
    assert f"holding `{shown}`" in rep["read_as"]
    lines = openstack.read_text().splitlines()
    counted = [n for runs in rep["matched"]["lines"].values() for a, b in runs
               for n in range(a, b + 1)]
    assert all(re.search(rx, lines[n - 1]) for n in counted)


def test_a_threshold_on_a_field_is_not_counted_and_says_why(openstack):
    """`took more than 0.3 seconds`: code does not compare the log's numbers; it says so."""
    assert grep_c(openstack, r"time: 0\.[3-9]") > 0  # there is something a guess could count
    rep = ask(openstack, "how many requests took more than 0.3 seconds?", code=3)
    assert rep["matched"]["total"] is None and rep["matched"]["lines"] == {}
    assert "`more than 0.3` reads as a threshold" in rep["answer"]
    assert not any(f["claim"].startswith("one of") for f in rep["findings"])


def test_a_threshold_on_each_groups_count_names_every_group_over_it(tmp_path):
    """`which IPs had more than 2 failed passwords?`: the exact groups above 2, each counted."""
    p = tmp_path / "auth.log"
    p.write_bytes((LOGHUB / "OpenSSH_head.log").read_bytes())
    per_ip: dict[str, int] = {}
    for s in p.read_text().splitlines():
        if m := re.search(r"Failed password .* from (\S+)", s):
            per_ip[m.group(1)] = per_ip.get(m.group(1), 0) + 1
    over = {ip for ip, c in per_ip.items() if c > 2}
    assert over and len(over) < len(per_ip)  # the threshold leaves some out
    q = read_query("which IPs had more than 2 failed passwords?")
    assert q.over == (">", 2) and not q.literals and not q.unsure
    rep = ask(p, "which IPs had more than 2 failed passwords?")
    assert set(rep["matched"]["over"]["values"]) == over
    assert rep["answer"].startswith(f"**{len(over)}** of {len(per_ip)} ip values had more "
                                    "than 2 of the"), rep["answer"][:200]
    assert all(f"**{ip}** ({per_ip[ip]})" in rep["answer"] for ip in over)
    rep = ask(p, "which IPs had fewer than 2 failed passwords?", code=3)  # the IPs with none?
    assert rep["matched"]["total"] is None


def test_a_word_and_number_the_log_writes_apart_give_no_number(openstack):
    """`code 404`: the log never writes `code` before 404, yet writes 404: not a sure 0."""
    rep = ask(openstack, "how many lines with code 404?", code=3)
    assert rep["matched"]["total"] is None
    assert "no line holds `code` then `404` as a field" in rep["answer"]


def test_a_number_on_no_line_is_not_a_sure_zero(openstack):
    """`the 2k log`, `status 500` where no line holds 500: code cannot tell a true 0 from a
    number that is no text of the log, so it gives none."""
    assert grep_c(openstack, r"(?<![\w.])500(?!\w)") == 0
    rep = ask(openstack, "how many lines with status 500?", code=3)
    assert rep["matched"]["total"] is None
    assert "no line holds `500` at all" in rep["answer"]


def test_mention_frames_the_count_and_a_name_after_it_is_text(tmp_path):
    p = tmp_path / "spark.log"
    p.write_bytes((LOGHUB / "Spark_head.log").read_bytes())
    rep = ask(p, "how many lines mention BlockManager?")
    assert rep["matched"]["total"] == grep_c(p, "BlockManager") > 0


def test_an_anchor_and_the_question_words_are_both_counted(tmp_path):
    """`failed passwords from IP` is not every line of the IP."""
    p = tmp_path / "auth.log"
    p.write_bytes((LOGHUB / "OpenSSH_head.log").read_bytes())
    lines = p.read_text().splitlines()
    ip = re.search(r"Failed password .* from (\S+)", "\n".join(lines)).group(1)
    want = sum("Failed password" in s and ip in s for s in lines)
    assert 0 < want < sum(ip in s for s in lines)
    rep = ask(p, f"how many failed passwords from {ip}?")
    assert rep["matched"]["total"] == want


def test_an_open_question_about_a_number_lists_the_lines_holding_it(openstack):
    """`what happened with status 404?` is not the log's anomalies: it is the 404 lines, as
    `what happened with 5.188.10.180?` is the lines of the IP."""
    rep = ask(openstack, "what happened with status 404?")
    assert rep["strategy"] == "count"
    assert rep["matched"]["total"] == grep_c(openstack, r"status: 404\b") > 0
    rep = ask(openstack, "any errors with status 404?")  # 404s are logged at INFO: a sure 0
    assert rep["matched"]["total"] == 0 and rep["answer"].startswith("**0** error-level lines")


def test_an_open_question_over_a_relative_time_is_not_the_whole_files_answer(openstack):
    rep = ask(openstack, "what went wrong in the last 2 hours?", code=3)
    assert "`2 hours` reads as a quantity or a duration" in rep["answer"]


def test_a_pid_is_also_the_pid_column(tmp_path):
    """Android's logcat names `pid=1702` on a few lines and writes 1702 as its pid column (after
    the time, before the thread id) on most: both are the pid."""
    p = tmp_path / "logcat.log"
    p.write_bytes((LOGHUB / "Android_head.log").read_bytes())
    lines = p.read_text().splitlines()
    want = sum(s.split()[2] == "1702" or "pid=1702" in s for s in lines)
    assert grep_c(p, r"pid=1702\b") < want
    rep = ask(p, "how many lines from pid 1702?")
    assert rep["matched"]["total"] == want
    assert "the pid column `1702`" in rep["read_as"]


def test_a_named_value_the_log_mostly_writes_as_a_bare_column_is_not_sure(tmp_path):
    """Apache's access log writes the status as a bare column; one error line names it: `how
    many lines with status 404?` may mean either (lines in the common log format, values made
    up here), so no number is given."""
    p = tmp_path / "access.log"
    p.write_text("".join(f'10.0.0.{i} - - [10/Oct/2000:13:55:{i:02d} -0700] "GET /a{i}.gif '
                         f'HTTP/1.0" {404 if i % 2 else 200} 2326\n' for i in range(12))
                 + "[Tue Oct 10 13:56:00 2000] [error] upstream returned status 404 for /b\n")
    rep = ask(p, "how many lines with status 404?", code=3)
    assert rep["matched"]["total"] is None
    assert "1 line holds `status 404`, but 6 other lines hold `404` as a field of its own" \
        in rep["answer"]


@pytest.mark.parametrize("question, key, op, n", [
    ("how many lines with time over 0.3?", "time", ">", "0.3"),
    ("how many lines with len greater than 2000?", "len", ">", "2000"),
    ("how many lines with status >= 400?", "status", ">=", "400"),
    ("how many lines with status below 300?", "status", "<", "300"),
])
def test_a_threshold_on_a_keys_number_is_a_comparison(question, key, op, n):
    q = read_query(question)
    assert [(lit.key, lit.op, lit.values) for lit in q.literals] == [(key, op, [n])]
    assert not q.unsure and key not in q.words


def test_a_range_on_a_key_is_two_comparisons(openstack):
    q = read_query("how many lines with status between 400 and 499?")
    assert [(lit.key, lit.op, lit.values) for lit in q.literals] == [
        ("status", ">=", ["400"]), ("status", "<=", ["499"])] and not q.unsure
    statuses = [int(m.group(1)) for s in openstack.read_text().splitlines()
                if (m := re.search(r"status: (\d+)", s))]
    want = sum(400 <= v <= 499 for v in statuses)
    assert 0 < want < len(statuses)
    rep = ask(openstack, "how many lines with status between 400 and 499?")
    assert "`status` with a number from 400 to 499" in rep["read_as"]
    assert rep["matched"]["total"] == want


def test_a_value_or_ed_to_a_comparison_is_not_sure():
    q = read_query("how many lines with status over 500 or 404?")
    assert q.unsure and "what `404` is compared with" in q.unsure[0]


def test_a_comparison_counts_the_lines_whose_number_passes(openstack):
    times = [float(m.group(1)) for s in openstack.read_text().splitlines()
             if (m := re.search(r"time: ([\d.]+)", s))]
    want = sum(t > 0.25 for t in times)
    assert 0 < want < len(times)
    rep = ask(openstack, "how many lines with time over 0.25?")
    assert rep["matched"]["total"] == want
    assert "`time` with a number over 0.25" in rep["read_as"]
    rep = ask(openstack, "how many lines with speed over 3?", code=3)  # no `speed` in the log
    assert "no line holds `speed` followed by a number" in rep["answer"]
