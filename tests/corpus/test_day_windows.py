"""A window on a whole day read as a person means it (rlm.corpus.timewindow): "before Dec 05"
ends as Dec 05 starts, in the log's own year (the question writes none: it once ran to the
end of the file, the shift being taken from the open start); "after Dec 04" is Dec 05 on,
"since Dec 04" is Dec 04 on, "until Dec 04" includes Dec 04. Counted here as grep counts on
LogHub's Apache sample (two days, Dec 04 and Dec 05 2005)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rlm.testing import run_cli

APACHE = Path(__file__).resolve().parents[2] / "evals" / "data" / "loghub" / "Apache_2k.log"


def errors_on(days: set[str]) -> int:
    return sum("[error]" in s and s[5:11] in days for s in APACHE.read_text().splitlines())


@pytest.mark.parametrize("question,days", [
    ("how many error lines before Dec 05?", {"Dec 04"}),
    ("how many error lines until Dec 04?", {"Dec 04"}),
    ("how many error lines after Dec 04?", {"Dec 05"}),
    ("how many error lines since Dec 04?", {"Dec 04", "Dec 05"}),
])
def test_a_day_window(tmp_path, question, days):
    p = tmp_path / "apache.log"
    p.write_bytes(APACHE.read_bytes())
    r = run_cli("ask", str(p), question, "--json", "--model", "none")
    assert r.returncode == 0, r.stdout[-1500:]
    told = int(re.search(r"\*\*([\d,]+)\*\*", json.loads(r.stdout)["answer"]).group(1)
               .replace(",", ""))
    assert told == errors_on(days) and told > 0


def test_a_window_with_no_line_says_so_first_with_the_logs_span(tmp_path):
    p = tmp_path / "apache.log"
    p.write_bytes(APACHE.read_bytes())
    r = run_cli("ask", str(p), "what happened on Dec 07?", "--json", "--model", "none")
    answer = json.loads(r.stdout)["answer"]
    assert ("No line of the log falls on Dec 07: its lines run from 2005-12-04 04:47:44 (line 1) "
            "to 2005-12-05 19:15:57 (line 2,000).") in answer
