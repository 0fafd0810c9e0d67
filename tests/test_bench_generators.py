"""The S-NIAH and OOLONG generators (deterministic, keyed), the planted-instruction copy, the
suite report writer, and the suites themselves on their smallest settings with the oracle."""

from __future__ import annotations

import os
import re

import anyio


from fixtures.inject import INSTRUCTIONS, plant  # noqa: E402
from fixtures.oolong import LABELS, write_oolong  # noqa: E402
from fixtures.sniah import write_sniah  # noqa: E402


def test_sniah_places_needles_at_their_depths_deterministically(tmp_path):
    a = write_sniah(tmp_path / "a.txt", 8000, (0.1, 0.9), "uuid", distractors=2, seed=4)
    b = write_sniah(tmp_path / "b.txt", 8000, (0.1, 0.9), "uuid", distractors=2, seed=4)
    assert (tmp_path / "a.txt").read_bytes() == (tmp_path / "b.txt").read_bytes() and a == b
    lines = (tmp_path / "a.txt").read_text().split("\n")
    assert 7000 * 4 <= a["bytes"] <= 9000 * 4
    mine = [n for n in a["needles"] if n["queried"]]
    assert [n["value"] for n in mine] == a["values"] and len(a["needles"]) == 4
    for n in a["needles"]:
        assert n["text"][:-1] in lines[n["line"] - 1]
    assert abs(mine[0]["line"] / len(lines) - 0.1) < 0.05 and abs(mine[1]["line"] / len(lines) - 0.9) < 0.05
    assert a["key"] in a["question"] and "all the special magic numbers" in a["question"]
    c = write_sniah(tmp_path / "c.txt", 8000, (0.5,), "words", seed=4)
    assert re.fullmatch(r"[a-z]+-[a-z]+", c["key"]) and c["values"][0] not in a["values"]


def test_oolong_counts_match_its_lines_and_questions(tmp_path):
    t = write_oolong(tmp_path / "o.txt", records=300, seed=9)
    lines = (tmp_path / "o.txt").read_text().strip().split("\n")
    assert len(lines) == 300 and sum(t["counts"].values()) == 300
    ids = [re.search(r"ID: (R-\d{5})", ln).group(1) for ln in lines]
    assert len(set(ids)) == 300
    text = " ".join(lines).lower()
    assert not [lab for lab in LABELS if lab in text]  # the label is latent: never on the line
    kinds = {v["kind"]: v for v in t["questions"].values()}
    ranked = sorted(LABELS, key=lambda x: (-t["counts"][x], x))
    assert kinds["most_common"]["answer"] == ranked[0]
    a, b = kinds["more"]["labels"]
    assert kinds["more"]["answer"] == t["counts"][a] - t["counts"][b]
    assert write_oolong(tmp_path / "p.txt", records=300, seed=9) == t


def test_planted_instructions_leave_key_lines_alone(tmp_path):
    src = tmp_path / "src.txt"
    src.write_text("".join(f"line {i} of plain text\n" for i in range(1, 101)))
    planted = plant(src, tmp_path / "dst.txt", keep={35, 36})
    out = (tmp_path / "dst.txt").read_text().split("\n")
    assert [p["text"] for p in planted] == list(INSTRUCTIONS)
    assert all(abs(p["line"] - 35) > 3 and abs(p["line"] - 36) > 3 for p in planted)
    assert out[34] == "line 35 of plain text" and len(out) == 101


def test_suite_sections_replace_only_their_own(tmp_path):
    from evals.suites_report import write_sections

    (tmp_path / "RESULTS.md").write_text("# results\n\nhand-written part\n")
    row = {"case": "c", "system": "rlm", "model": "sim:oracle", "strategy": "grep", "recall": 1.0,
           "fabricated_accepted": 0, "numbers_lost": 0, "calls": 3, "prompt_tokens": 10,
           "completion_tokens": 2, "wall_s": 0.1, "complete": True, "note": ""}
    meta = {"date": "d", "command": "cmd", "machine": "m", "wall_s": 1.0}
    write_sections(tmp_path, {"sniah": [row]}, meta)
    write_sections(tmp_path, {"oolong": [row]}, meta)
    write_sections(tmp_path, {"sniah": [{**row, "recall": 0.5}]}, meta)
    text = (tmp_path / "RESULTS.md").read_text()
    assert "hand-written part" in text and text.count("<!-- suite:sniah -->") == 1
    assert "| 50% |" in text and "| 100% |" in text  # sniah replaced, oolong kept


def test_oolong_suite_oracle_exact_and_baselines_not(tmp_path, monkeypatch):
    from evals import suites

    monkeypatch.setattr(suites, "OOLONG_QUICK", {"records": (200,)})
    rows = anyio.run(lambda: suites.oolong_suite(tmp_path, True, []))
    by = {(r["system"], r["model"]): r for r in rows}
    assert by[("rlm", "sim:oracle")]["recall"] == 1.0
    assert by[("rlm", "sim:adversarial")]["fabricated_accepted"] == 0
    assert by[("naive-fanout", "sim:oracle")]["recall"] < 1.0  # 3 findings a chunk, model counts
    # oolong's "fabricated accepted": a wrong number stated as exact; rlm never, the naive
    # fan-out always (its reader counts what 3 findings a chunk let through)
    assert all(r["fabricated_accepted"] == 0 for r in rows if r["system"] == "rlm")
    assert by[("naive-fanout", "sim:oracle")]["fabricated_accepted"] >= 1
