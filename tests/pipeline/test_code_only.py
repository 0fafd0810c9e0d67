"""The `none` tier (nothing configured) and "a model never spoils what code found".

CLI runs are real subprocesses with no model configured; model runs talk to the fake HTTP
server, with faults injected into the wording calls.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import anyio
import pytest

from rlm.api import AskOptions, ask_async
from rlm.fixtures.log import write_log
from rlm.models.none import NOTICE
from rlm.models.openai_compat import OpenAICompatModel, reset_mode_cache
from rlm.testing.cli import run_cli  # in-process: a process per call costs seconds


def rlm(*args, env=None, timeout=120):
    e = {k: v for k, v in os.environ.items() if k not in ("RLM_MODEL", "RLM_BASE_URL")}
    e.update(env or {})
    return run_cli(*args, env=e)


def model_for(server) -> OpenAICompatModel:
    reset_mode_cache()
    return OpenAICompatModel("fake", server.url, context_tokens=8192, timeout=5.0,
                             max_attempts=2, backoff_base=0.01)


def run(path, question, server, **opts):
    return anyio.run(lambda: ask_async(str(path), question, AskOptions(**opts),
                                       model=model_for(server)))


@pytest.fixture(scope="module")
def big_log(tmp_path_factory):
    p = tmp_path_factory.mktemp("log") / "big.log"
    return p, write_log(p, lines=20_000)


# ------------------------------------------------------------------------ code only (CLI)

def test_anomalies_with_nothing_configured_is_complete_from_code(big_log):
    p, key = big_log
    r = rlm("ask", str(p), "anomalies?", "--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["model"] == "none" and rep["tier"] == "none" and rep["usage"]["calls"] == 0
    assert rep["answer"].startswith("**Found:** ") and NOTICE in rep["answer"]
    cited = {f["source"]["line_start"] for f in rep["findings"] if f["verified"]}
    assert {n["line"] for n in key["needles"]} <= cited  # 12/12 needles
    assert rep["coverage"]["complete"] and "no model read" in rep["coverage"]["statement"]
    # code's wording: counts, first/last time, component, shared id, the rule that picked them
    story = next(g for g in rep["groups"] if g["kind"] == "identifier")
    claim = next(f["claim"] for f in rep["findings"] if f["group"] == story["id"])
    first, last = (n["text"][11:19] for n in key["needles"] if n["kind"] == "session"
                   and n["step"] in (1, 5))
    assert claim.startswith(f"5 lines from auth") and key["session_id"] in claim
    assert first in claim and last in claim and "picked:" in claim
    panic = next(g for g in rep["groups"] if g["kind"] != "event" and any(
        n["line"] in g["lines"] for n in key["needles"] if n["kind"] == "panic"))
    kind = next(g for g in rep["groups"] if g["kind"] == "event" and "nil pointer" in g["key"])
    assert kind["count"] == 4 and kind["severity"] == "ERROR"  # the event-kind table's row
    pclaim = next(f["claim"] for f in rep["findings"] if f["group"] == panic["id"])
    assert pclaim.startswith(f"4 lines from {key['panic_component']} between") and "error level" in pclaim


def test_grep_with_nothing_configured_is_an_ordered_timeline(tmp_path):
    p = tmp_path / "orders.log"
    rows = [f"2026-05-2{d}T0{h}:00:00Z INFO [web] GET /health status=200" for d in range(2, 8)
            for h in range(10)]
    rows[5] = "2026-05-22T04:28:00Z INFO [orders] order ORD-99173 created amount=42.00"
    rows[20] = "2026-05-24T03:00:00Z INFO [payments] payment captured order=ORD-99173 amount=42.00"
    rows[30] = "2026-05-25T03:00:00Z WARN [payments] refund issued order=ORD-99173 amount=42.00"
    rows[50] = "2026-05-27T05:00:00Z WARN [payments] refund issued order=ORD-99173 amount=42.00"
    p.write_text("\n".join(rows) + "\n")
    r = rlm("ask", str(p), "what happened to ORD-99173?")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    answer = out.split("## Answer", 1)[1]  # in the answer: found, then how
    assert answer.lstrip().startswith("**Found:** 4 lines mention ORD-99173")
    assert out.splitlines()[2] == f"> {NOTICE}"  # the report's first line under its title
    assert out.count(NOTICE) == 1  # said once (issue 19 item 7)
    # times as the file writes them (issue 19)
    assert "between 2026-05-22T04:28:00Z and 2026-05-27T05:00:00Z (5 days 32 min)" in out
    assert "refund issued order=ORD-99173 amount=42.00 again" in out  # the searched text stays
    assert "What repeats: “refund issued order=ORD-99173 amount=42.00” ×2 (lines 31, 51)" in out
    assert out.index("line 6 ·") < out.index("line 21 ·") < out.index("line 31 ·") < out.index("line 51 ·")


def planted_prose(path, n_par=600, seed=3):
    rnd = random.Random(seed)
    words = ("river garden window market morning letter village teacher summer paper bridge "
             "station evening harbor kitchen forest doctor mountain music engine").split()
    pars = []
    for _ in range(n_par):
        pars.append(" ".join(rnd.choice(words) for _ in range(40)) + ".")
    plant = rnd.randrange(200, 500)
    pars[plant] = ("The lighthouse keeper hid the brass key under the third stair of the "
                   "tower before the storm.")
    pars[plant - 50] = "A key was mentioned here, and another key, and a key again."  # decoy
    # each of the question's words is on many lines (too common to be an anchor for the
    # rare-words search): only reading, or ranking, can tell the passage apart
    for i, word in enumerate(("lighthouse", "keeper", "brass", "hide", "key") * 20):
        at = (7 * i + 3) % n_par
        if abs(at - plant) > 1:
            pars[at] += f" The {word} again."
    path.write_text("\n\n".join(pars) + "\n")
    return 2 * plant + 1  # its line number


def test_fanout_with_nothing_configured_ranks_the_planted_passage_first(tmp_path):
    p = tmp_path / "story.txt"
    line = planted_prose(p)
    r = rlm("ask", str(p), "where did the lighthouse keeper hide the brass key?", "--json")
    assert r.returncode == 3, r.stderr  # reading was needed and no model read: incomplete
    rep = json.loads(r.stdout)
    assert rep["strategy"] == "fanout" and rep["usage"]["calls"] == 0
    top = rep["findings"][0]
    assert top["source"]["line_start"] <= line <= top["source"]["line_end"]
    assert "lighthouse keeper" in top["evidence"] and "not read by a model" in top["claim"]
    cov = rep["coverage"]
    assert not cov["complete"] and "no model read" in cov["statement"]
    from rlm.render import answer_markdown  # the passages are rendered from the findings
    from rlm.schemas.report import Report

    assert "found by code, not read by a model" in answer_markdown(Report.model_validate(rep))


def test_direct_with_nothing_configured_ranks_and_says_incomplete(tmp_path):
    p = tmp_path / "services"
    p.write_text("".join(f"svc{i} {1000 + i}/tcp # remote protocol {i}\n" for i in range(300))
                 + "ssh 22/tcp # SSH Remote Login Protocol\n"
                 + "".join(f"login{i} {2000 + i}/udp # login daemon\n" for i in range(20)))
    r = rlm("ask", str(p), "which protocol is for remote login?")  # common words only
    assert r.returncode == 3, r.stdout
    assert "Strategy: **direct**" in r.stdout and "too common to be an anchor" in r.stdout
    assert "p1** `" in r.stdout and "301| ssh 22/tcp" in r.stdout  # among the ranked passages


def test_model_local_without_the_extra_is_one_line(tmp_path):
    import importlib.util

    if importlib.util.find_spec("llama_cpp") is not None:
        pytest.skip("the local extra is installed here")
    p = tmp_path / "a.log"
    p.write_text("x\n")
    r = rlm("ask", str(p), "anomalies?", "--model", "local")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "pip install 'rlm[local]'" in lines[0]


# ------------------------------------------------------------------------ model wording is optional

def test_failing_label_call_keeps_profile_complete(big_log, fake_server):
    p, key = big_log
    fake_server.fault("Lines:", "500")  # every judge_group call fails, forever
    rep = run(p, "anomalies?", fake_server)
    assert rep.coverage.complete and not rep.coverage.chunks_failed
    assert any("the model's wording failed for 3 of 3 groups" in d for d in rep.coverage.declared)
    cited = {f.source.line_start for f in rep.findings if f.verified}
    assert {n["line"] for n in key["needles"]} <= cited
    assert all(f.claim and "picked:" in f.claim for f in rep.findings)
    assert len(fake_server.requests) >= 3


def test_invalid_label_output_keeps_profile_complete(big_log, fake_server):
    p, _ = big_log
    fake_server.on("GroupJudgement", lambda req, text: "this is not json")
    rep = run(p, "anomalies?", fake_server)
    assert rep.coverage.complete and "wording failed" in rep.coverage.statement


def test_model_label_noise_never_downgrades_a_panic(big_log, fake_server):
    p, key = big_log
    fake_server.on("GroupJudgement", lambda req, text: {"label": "noise", "summary": "routine lines"})
    rep = run(p, "anomalies?", fake_server)
    panic_lines = {n["line"] for n in key["needles"] if n["kind"] == "panic"}
    g = next(g for g in rep.groups if set(g["lines"]) == panic_lines)
    assert g["label"] == "error"
    from rlm.render import answer_markdown  # groups are rendered from the report's data

    assert "[label: error (the model labelled it 'noise'" in answer_markdown(rep)
    cfg = next(g for g in rep.groups if g["kind"] == "template" and g["label"])
    assert cfg["label"] in ("noise", "error")  # WARN config lines: the model's word may stand


def test_grep_with_failing_answer_call_still_shows_code_timeline(big_log, fake_server):
    p, key = big_log
    txn = key["txn_ids"][1]
    fake_server.fault(txn, "500")
    rep = run(p, f"what happened to {txn}?", fake_server)
    assert rep.strategy == "grep" and rep.coverage.complete and not rep.coverage.chunks_failed
    assert "wording failed for 1 of 1 answer call" in rep.coverage.statement
    assert f"1 line mentions {txn} at " in rep.answer and "Timeline (found by code" in rep.answer
    panic = next(n for n in key["needles"] if n["id"] == txn)
    assert [f.source.line_start for f in rep.findings] == [panic["line"]]


def test_grep_fanout_over_many_hits_with_failing_reads_keeps_code_timeline(tmp_path, fake_server):
    p = tmp_path / "svc.log"
    rows = []
    for i in range(3000):
        if i % 10 == 3:
            rows.append(f"2026-05-01T{i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z WARN [pay] "
                        f"retry for ORD-7 attempt={i} backend=b{i % 7} latency={i % 97}ms")
        else:
            rows.append(f"2026-05-01T{i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z INFO [web] GET /health ok")
    p.write_text("\n".join(rows) + "\n")
    fake_server.fault("ORD-7", "500")  # every read of the matching regions fails
    reset_mode_cache()
    model = OpenAICompatModel("fake", fake_server.url, context_tokens=2048, timeout=5.0,
                              max_attempts=1, backoff_base=0.01)
    rep = anyio.run(lambda: ask_async(str(p), "what happened to ORD-7?", AskOptions(), model=model))
    assert rep.strategy == "grep" and any("do not fit one call" in r for r in rep.gate.reasons)
    cov = rep.coverage
    assert cov.complete and not cov.chunks_failed and cov.chunks_total > 1
    assert "matching regions" in cov.statement and "wording failed" in cov.statement
    assert "300 lines mention ORD-7 between" in rep.answer
    assert "Timeline (found by code" in rep.answer and "(40 of 300 hits shown)" in rep.answer
