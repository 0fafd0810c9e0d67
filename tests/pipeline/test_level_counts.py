""""How many errors?" counts the lines that write an error level. In a log that writes a level
on most lines (Apache's `[error]`) that is the answer; in one that writes none on most (a
syslog, a Mac log, sshd's) it is only the few lines whose message starts with a level word,
and the lines that report errors in their own words are not counted: not sure (exit 3), said
with what was sampled. On LogHub's real lines (evals/data/loghub)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from rlm.testing import run_cli

LOGHUB = Path(__file__).resolve().parents[2] / "evals" / "data" / "loghub"


def ask(tmp_path: Path, name: str, question: str):
    p = tmp_path / name
    p.write_bytes((LOGHUB / name).read_bytes())
    r = run_cli("ask", str(p), question, "--json", "--model", "none")
    return r.returncode, json.loads(r.stdout)["answer"], p.read_text().splitlines()


def test_a_level_count_where_every_line_writes_a_level_is_the_answer(tmp_path):
    code, answer, lines = ask(tmp_path, "Apache_2k.log", "how many errors?")
    errors = sum("] [error] " in s for s in lines)
    assert code == 0 and errors == 595 and answer.startswith(f"**{errors}** error-level lines")


def test_a_level_count_where_few_lines_write_a_level_is_not_sure(tmp_path):
    code, answer, lines = ask(tmp_path, "Linux_2k.log", "how many errors?")
    assert code == 3, answer[:300]
    m = re.match(r"Not sure: this log writes a level on (\d+) of the (\d+) lines code sampled",
                 answer)
    assert m and 2 * int(m.group(1)) < int(m.group(2)) == 400
    assert 'how many lines mention "error"?' in answer
    code, answer, _ = ask(tmp_path, "Linux_2k.log", "how many warnings?")
    assert code == 3 and answer.startswith("Not sure: this log writes a level")
