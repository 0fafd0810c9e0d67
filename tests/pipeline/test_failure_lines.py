""""Cite every line that reports a failure" is answered by code (issue 19): the question is read
as code's failure rule (rlm.corpus.anomalies), the answer gives the exact count per kind and in
all, shows a sample ("60 of N shown"), names apart what the rule leaves out, and `--json`
carries every line number as ranges. Lines in BGL's real format, values made up here."""

from __future__ import annotations

import json

import pytest

from rlm.testing.cli import run_cli

HEAD = "{e} 2005.06.11 {node} 2005-06-11-{hms}.123456 {node} RAS {comp} {lvl} {msg}"


def _line(i: int, comp: str, lvl: str, msg: str) -> str:
    node = f"R{i % 8:02d}-M0-N{i % 4}-C:J16-U01"
    hms = f"{10 + i // 3600 % 10:02d}.{i // 60 % 60:02d}.{i % 60:02d}"
    return HEAD.format(e=1118500000 + i, node=node, hms=hms, comp=comp, lvl=lvl, msg=msg)


def _lines() -> tuple[list[str], set[int]]:
    """(lines, the line numbers that report a failure by the rule)."""
    out, want = [], set()
    for i in range(900):
        out.append(_line(i, "KERNEL", "INFO", f"generating core.{2000 + i}"))
        if i % 9 == 2:
            out.append(_line(i, "KERNEL", "FATAL", "data TLB error interrupt"))
            want.add(len(out))
        if i % 45 == 7:
            out.append(_line(i, "APP", "FATAL", f"ciod: Error reading message prefix on "
                                                f"CioStream socket to 172.16.96.{i % 200}:"
                                                f"{33000 + i}, Link has been severed"))
            want.add(len(out))
        if i % 30 == 11:  # the caller's missing file: named apart, not a failure
            out.append(_line(i, "APP", "FATAL", f"ciod: LOGIN chdir(/p/gb2/u{i}/run) failed: "
                                                "No such file or directory"))
        if i % 60 == 13:  # ERROR with no failure word: named apart
            out.append(_line(i, "MMCS", "ERROR", f"idoproxydb hit ASSERT condition: ASSERT "
                                                 f"expression={i % 2} Source line={i}"))
    return out, want


@pytest.fixture(scope="module")
def bgl(tmp_path_factory):
    lines, want = _lines()
    p = tmp_path_factory.mktemp("bgl") / "bgl.log"
    p.write_text("\n".join(lines) + "\n")
    return p, want


def ask(path, question: str) -> tuple[int, dict]:
    r = run_cli("ask", str(path), question, "--json", "--model", "none")
    assert r.returncode in (0, 3), r.stderr[-2000:]
    return r.returncode, json.loads(r.stdout)


def _expand(ranges: dict) -> set[int]:
    return {n for runs in ranges.values() for a, b in runs for n in range(a, b + 1)}


@pytest.mark.parametrize("question", ["cite every line that reports a failure",
                                      "list all lines reporting failures",
                                      "which lines report an error?"])
def test_every_failure_line_is_in_the_json_as_ranges(bgl, question):
    path, want = bgl
    rc, rep = ask(path, question)
    assert rc == 0 and rep["strategy"] == "count"
    m = rep["matched"]
    assert m["total"] == len(want) and _expand(m["lines"]) == want
    assert "report a failure" in rep["read_as"] and "code's rule" in rep["read_as"]


def test_counts_per_kind_a_sample_and_what_the_rule_leaves_out(bgl):
    path, want = bgl
    _, rep = ask(path, "cite every line that reports a failure")
    answer = rep["answer"]
    tlb = sum(1 for i in range(900) if i % 9 == 2)
    sev = sum(1 for i in range(900) if i % 45 == 7)
    assert f"**{len(want)}** lines that report a failure, in 2 event kinds" in answer
    assert f"| `data TLB error interrupt` | FATAL | {tlb} |" in answer
    assert f"| {sev} |" in answer.split("Link has been severed`", 1)[1].splitlines()[0]
    assert f"60 of {len(want)} shown" in answer
    cited = [f["source"]["line_start"] for f in rep["findings"]]
    assert len(cited) == 60 and set(cited) <= want
    assert any("severed" in f["evidence"] for f in rep["findings"])  # every kind sampled
    assert "Not counted as failures" in answer and "No such file or directory" in answer
    assert "idoproxydb" in answer and "ERROR level, no failure word" in answer


def test_a_count_of_failure_lines_in_a_window(bgl):
    path, _ = bgl
    lines = path.read_text().splitlines()
    want = [n for n, s in enumerate(lines, 1) if "2005-06-11-10." in s
            and ("TLB error" in s or "severed" in s)]
    rc, rep = ask(path, "how many lines report a failure between 2005-06-11 10:00 and "
                        "2005-06-11 10:59?")
    assert rc == 0 and rep["matched"]["total"] == len(want)
    assert _expand(rep["matched"]["lines"]) == set(want)


def test_a_folder_counts_each_files_failures_and_says_all_files(tmp_path, bgl):
    path, want = bgl
    d = tmp_path / "logs"
    d.mkdir()
    (d / "a.log").write_text(path.read_text())
    (d / "b.log").write_text(path.read_text())
    rc, rep = ask(d, "cite every line that reports a failure")
    assert rc == 0 and rep["matched"]["total"] == 2 * len(want)
    assert {p.rsplit("/", 1)[-1] for p in rep["matched"]["lines"]} == {"a.log", "b.log"}
    assert all(_expand({p: r}) == want for p, r in rep["matched"]["lines"].items())
    assert "all 2 files" in rep["answer"] and "whole file" not in rep["answer"]
