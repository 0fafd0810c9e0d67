"""Real questions with numbers in them (evals/real_questions.py runs them with the others):
a number or literal token is part of what is counted (rlm/corpus/literals.py). Each answer is
grep's, with the grep command beside it; thresholds code cannot place are scored too (an honest
"not sure" is their floor)."""

from __future__ import annotations

import re

from evals.question_rules import Case, count_of, over_of, top_of

_UID0 = re.compile(r"(?<!\w)uid=0\b")  # grep -E "(^|[^[:alnum:]_])uid=0\b"


def _with_uid0(phrase: str):
    """Lines holding `phrase` and the whole field uid=0 (not euid=0)."""
    return lambda ls: sum(phrase in s and bool(_UID0.search(s)) for s in ls)


NUMBER_CASES = [
    # numbers and literal tokens are part of what is counted (session 4); each answer is grep's
    Case("OpenStack", "how many status 404 lines?", "count",  # grep -c "status: 404" -> 41
         count_of(r"status: 404\b"), "was 1,017 (every `status` line), Complete"),
    Case("OpenStack", "count lines with status 200", "count",  # grep -c "status: 200" -> 933
         count_of(r"status: 200\b")),
    Case("OpenStack", "how many lines have status: 200?", "count",  # grep -c "status: 200" -> 933
         count_of(r"status: 200\b")),
    Case("OpenStack", "how many lines mention status: 404?", "count",  # grep -c "status: 404" -> 41
         count_of(r"status: 404\b")),
    Case("OpenStack", "how many 404s?", "count",
         # grep -cE "(^|[^[:alnum:]_.])404([^[:alnum:]_]|$)" -> 41 (grep -cw: 43, with the
         # milliseconds of `00:06:12.404`, part of a time, not a 404)
         count_of(r"(?<![\w.])404(?!\w)")),
    Case("OpenStack", "which IP had the most status 404 lines?", "top",
         # grep "status: 404" | grep -oE "\] [0-9.]+ " | sort | uniq -c -> 21 of 41
         top_of(r"status: 404\b", r"\] (\d+\.\d+\.\d+\.\d+) ")),
    Case("OpenSSH", "how many lines with port 2191?", "count",  # grep -cw "port 2191" -> 6
         count_of(r"port 2191\b")),
    Case("OpenSSH", "how many failed passwords from 5.188.10.180?", "count",
         # grep "Failed password" | grep -c "5.188.10.180" -> 18 (53 lines hold the IP)
         lambda ls: sum("Failed password" in s and "5.188.10.180" in s for s in ls)),
    Case("Apache", "how many lines with error state 6?", "count",  # grep -c "error state 6" -> 369
         count_of(r"error state 6\b")),
    Case("Linux", "how many lines with uid=0?", "count",
         count_of(r"(?<!\w)uid=0\b")),  # grep -cE "(^|[^[:alnum:]_])uid=0\b" -> 577
    Case("Linux", "how many authentication failures with uid=0?", "count",
         # grep "authentication failure" | grep -cE "(^|[^[:alnum:]_])uid=0\b" -> 490
         _with_uid0("authentication failure")),
    Case("Linux", "how many lines with uid=0 and euid=0?", "count",
         # grep -E "(^|[^[:alnum:]_])uid=0\b" | grep -c "euid=0" -> 490
         _with_uid0("euid=0")),
    Case("HDFS", "how many lines on port 50010?", "count",  # grep -cE "(:|port )50010\b" -> 999
         count_of(r"(?::|port )50010\b")),
    Case("Hadoop", "how many lines mention port 8030?", "count",  # grep -cE "(:|port )8030\b" -> 293
         count_of(r"(?::|port )8030\b")),
    Case("OpenSSH", "how many lines with pid 24200?", "count",  # grep -c "\[24200\]" -> 7
         count_of(r"\[24200\]")),
    Case("Zookeeper", "how many lines with :3888?", "count",  # grep -cE ":3888\b" -> 386
         count_of(r":3888\b")),
    Case("Thunderbird", "how many sessions opened by uid=0?", "count",
         # grep "session opened" | grep -c "uid=0" -> 19
         _with_uid0("session opened")),
    Case("HDFS", "how many lines with size 67108864?", "count",  # grep -c "size 67108864" -> 573
         count_of(r"size 67108864\b")),
    Case("HDFS", "how many PacketResponder 1 lines?", "count",  # grep -cE "PacketResponder 1\b" -> 108
         count_of(r"PacketResponder 1\b")),
    Case("Zookeeper", "how many lines with time out: 60000?", "count",  # grep -c "out: 60000" -> 36
         count_of(r"out: 60000\b")),
    Case("Mac", "how many lines with port = 11?", "count",  # grep -cE "port = 11\b" -> 17
         count_of(r"port = 11\b")),
    Case("Spark", "how many lines mention BlockManager?", "count",  # grep -c BlockManager -> 260
         count_of(r"BlockManager")),
    # an open question about a number: its lines, not the log's anomalies (was the profile)
    Case("OpenStack", "what happened with status 404?", "count",  # grep -c "status: 404" -> 41
         count_of(r"status: 404\b")),
    Case("OpenStack", "any errors with status 404?", "count",
         # grep " ERROR " | grep -c "status: 404" -> 0 (every 404 is logged at INFO)
         count_of(r" (?:ERROR|CRITICAL) .*status: 404\b")),
    # `pid=1702` is named on 22 lines, 1702 is the pid column of 1,095 (was 22, Complete)
    Case("Android", "how many lines from pid 1702?", "count",  # awk '$3 == 1702' | wc -l -> 1095
         lambda ls: sum(s.split()[2:3] == ["1702"] for s in ls)),
    # a threshold on the number after a key is compared line by line
    Case("OpenStack", "how many lines with time over 0.3?", "count",
         # grep -oE "time: [0-9.]+" | awk '$2 > 0.3' | wc -l -> 81
         lambda ls: sum(float(m.group(1)) > 0.3 for s in ls
                        if (m := re.search(r"time: ([\d.]+)", s)))),
    Case("OpenStack", "how many lines with status >= 400?", "count",
         # grep -oE "status: [0-9]+" | awk '$2 >= 400' | wc -l -> 41
         lambda ls: sum(int(m.group(1)) >= 400 for s in ls
                        if (m := re.search(r"status: (\d+)", s)))),
    Case("OpenStack", "how many lines with status between 400 and 499?", "count",
         # grep -oE "status: [0-9]+" | awk '$2 >= 400 && $2 <= 499' | wc -l -> 41
         lambda ls: sum(400 <= int(m.group(1)) <= 499 for s in ls
                        if (m := re.search(r"status: (\d+)", s)))),
    Case("OpenSSH", "how many failed passwords with port above 60000?", "count",
         # grep "Failed password" | grep -oE "port [0-9]+" | awk '$2 > 60000' | wc -l -> 38
         lambda ls: sum(int(m.group(1)) > 60000 for s in ls if "Failed password" in s
                        if (m := re.search(r"port (\d+)", s)))),
    # a threshold is not a predicate word: code does not count by it (honest), never guesses
    Case("OpenSSH", "which IPs had more than 10 failed passwords?", "over",
         # grep "Failed password" | grep -oE "from [0-9.]+" | sort | uniq -c | awk '$1 > 10' -> 6
         over_of(r"Failed password", r"from (\d+\.\d+\.\d+\.\d+)", 10)),
    Case("OpenStack", "how many requests took more than 0.3 seconds?", "count",
         # grep -oE "time: [0-9.]+" | awk '$2 > 0.3' | wc -l
         lambda ls: sum(float(m.group(1)) > 0.3 for s in ls
                        if (m := re.search(r"time: ([\d.]+)", s)))),
]
