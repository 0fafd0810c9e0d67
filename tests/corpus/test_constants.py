"""Digit-bearing words that are the same on every line of a kind stay constants (`ssh2`), while
values stay variables (rlm/corpus/constants.py). Lines in the sshd and Apache formats, values
made up here."""

from __future__ import annotations

from rlm.corpus.source import TextSource
from rlm.corpus.templates import build_table, split_slots

SSH = "Dec 10 07:{m:02d}:{s:02d} LabSZ sshd[{pid}]: {msg}"


def _table(tmp_path, lines):
    p = tmp_path / "x.log"
    p.write_text("\n".join(lines) + "\n")
    src = TextSource.open(str(p))
    return src, build_table(src)


def test_ssh2_stays_while_ports_users_and_repeated_counts_are_variables(tmp_path):
    lines = []
    for i in range(300):
        user = ["root", "admin", "oracle", "guest", "test"][i % 5]
        lines.append(SSH.format(m=i // 60, s=i % 60, pid=24000 + i,
                                msg=f"Failed password for {user} from 10.0.{i % 7}.{i % 250} "
                                    f"port {40000 + i} ssh2"))
        # a size the same on every line code reads back (the first ones, the last one) but
        # one in the middle: a bare number is a value, never put back
        size = 1024 if i == 150 else 512
        lines.append(SSH.format(m=i // 60, s=i % 60, pid=24000 + i,
                                msg=f"Received {size} bytes from 10.0.{i % 7}.{i % 250}"))
        if i % 50 == 0:  # a name on each line of its kind, with a digit
            lines.append(SSH.format(m=i // 60, s=i % 60, pid=24000 + i,
                                    msg=f"Reading /etc/ssh/sshd_config2 at step {i}"))
    src, table = _table(tmp_path, lines)
    with src:
        got = {k.template: k for k in table.templates}
        assert "Failed password for <*> from <*> port <*> ssh2" in got
        assert "Received <*> bytes from <*>" in got
        assert "Reading /etc/ssh/sshd_config2 at step <*>" in got
        ssh = got["Failed password for <*> from <*> port <*> ssh2"]
        assert ssh.constants == ["ssh2"] and ssh.shape.endswith("port <*> <*>")
        assert ssh.count == 300  # the grouping is the same: only the words changed
        n = 0
        for ln, tid in enumerate(table.assign(src), 1):  # every line reads as its template
            k = table.by_id(tid)
            raw = src.line(ln)
            assert split_slots(k.template, raw[raw.index("]: ") + 3:]) is not None, raw
            n += 1
        assert n == len(lines)


def test_a_kind_of_one_line_keeps_its_variables(tmp_path):
    lines = [SSH.format(m=0, s=i % 60, pid=100 + i, msg=f"Accepted password for u{i} from "
                        f"10.1.1.{i} port {2000 + i} ssh2") for i in range(40)]
    lines.append(SSH.format(m=1, s=0, pid=999, msg="Server listening on 0.0.0.0 port 2222 v9x"))
    src, table = _table(tmp_path, lines)
    with src:
        one = [k for k in table.templates if k.count == 1]
        assert one and all("<*>" in k.template and not k.constants for k in one)
