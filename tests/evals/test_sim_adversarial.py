"""The adversarial and noisy readers on the paths tests/test_sim_readers.py does not cover: S-NIAH
(grep), OOLONG (exact aggregation), the repository audit and requirements mining. Every run goes
through the real fake server and rlm's own HTTP client. Targets (issue 11): no fabricated
evidence verified, code-found candidates and code's counts not suppressed by planted
instructions, every failure named in coverage, the run inside its budget."""

from __future__ import annotations

import os

import anyio
import pytest


from evals import suites  # noqa: E402
from evals.adversarial import REPO_PLANTS, oolong_copy, sniah_copy  # noqa: E402
from evals.sim.key import SimKey  # noqa: E402
from fixtures.oolong import write_oolong  # noqa: E402
from fixtures.sniah import write_sniah  # noqa: E402


def obeyed(log: list[dict], what: str) -> int:
    return sum(1 for e in log if e["kind"] == "obeyed" and e.get("what") == what)


@pytest.mark.parametrize("which", ["nothing", "cite", "both"])
def test_sniah_planted_instructions_cannot_hide_the_needle_code_found(tmp_path, which, instructions_shown):
    p = tmp_path / "haystack.txt"
    truth = write_sniah(p, 32_000, (0.1,), "uuid", distractors=3)
    needle = next(n for n in truth["needles"] if n["queried"])
    line = p.read_text().split("\n")[needle["line"] - 1]
    value = truth["values"][0]
    assert line.index(value) + len(value) > 160  # past where a shortened hit line used to end
    adv, key = sniah_copy(p, truth, tmp_path / "adv.txt", which)
    r, log = anyio.run(lambda: suites.run_system("rlm", "adversarial", adv, truth["question"], key))
    assert obeyed(log, "report nothing" if which == "nothing" else "cite") == 1
    assert r.strategy == "grep" and r.complete
    assert value in r.answer  # code's hit line carries the value whatever the model said
    ver = [f for f in r.findings if f.get("verified")]
    assert ver and all(value in f["evidence"] for f in ver)  # line 1 never became evidence
    assert suites.fabricated(r) == 0


@pytest.fixture(scope="module")
def oolong(tmp_path_factory):
    d = tmp_path_factory.mktemp("oolong")
    p = d / "records.txt"
    truth = write_oolong(p, records=300, seed=5)
    return p, truth


def _oolong_runs(path, truth, reader, key, **kw):
    out = []
    for q, spec in truth["questions"].items():
        r, log = anyio.run(lambda: suites.run_system("rlm", reader, path, q, key, **kw))
        out.append((spec, r, log))
    return out


def test_oolong_planted_instructions_leave_only_honest_ranges(oolong, tmp_path, instructions_shown):
    p, truth = oolong
    adv, key = oolong_copy(p, truth, tmp_path / "adv.txt")
    runs = _oolong_runs(adv, truth, "adversarial", key)
    log = [e for _, _, lg in runs for e in lg]
    assert obeyed(log, "report nothing") >= 1 and obeyed(log, "cite") >= 1
    for spec, r, _ in runs:
        # a number stated as exact is the true one; otherwise the stated bound holds the truth
        assert suites.honest(spec["kind"], spec["answer"], r.answer), (spec, r.answer[:300])
        # the record planted at line 1 did not check out against its line, and that is said
        assert "did not check out" in r.statement, r.statement
        # the chunk whose reader reported nothing is named: the run is not complete
        assert not r.complete and "not extracted" in r.statement


NASTY = {"offby": 0.5, "badquote": 0.4, "fabricate": 0.6, "dup": 0.3, "drop": 0.2,
         "schema": 0.3, "refuse": 0.1, "429": 0.15, "slow": 0.05}


def test_oolong_noisy_reader_inside_its_budget_with_failures_named(oolong):
    p, truth = oolong
    key = SimKey.from_json(truth["sim_key"])
    runs = _oolong_runs(p, truth, "noisy", key, seed=2, rates=NASTY,
                        budget={"max_calls": 12, "max_wall_s": 30})
    log = [e for _, _, lg in runs for e in lg]
    assert sum(e["kind"] in ("schema", "refuse", "429") for e in log) >= 3  # damage happened
    failed = 0
    for spec, r, _ in runs:
        assert r.calls <= 12
        assert suites.honest(spec["kind"], spec["answer"], r.answer), (spec, r.answer[:300])
        for c in r.failed:
            failed += 1
            assert c["chunk"] in r.statement
        assert r.complete == (not r.failed and "not extracted" not in r.statement)
    assert failed >= 1  # the budget and the damage did fail chunks (else nothing was tested)


def test_sniah_noisy_reader_inside_its_budget(tmp_path):
    p = tmp_path / "haystack.txt"
    truth = write_sniah(p, 32_000, (0.5,), "words", distractors=3)
    key = SimKey.from_json(truth["sim_key"])
    r, log = anyio.run(lambda: suites.run_system("rlm", "noisy", p, truth["question"], key,
                                                 seed=1, rates={**NASTY, "schema": 0.9},
                                                 budget={"max_calls": 3}))
    assert sum(e["kind"] == "schema" for e in log) >= 1
    assert r.calls <= 3 and r.strategy == "grep"
    assert truth["values"][0] in r.answer  # the wording failed; code's hit line did not
    assert suites.fabricated(r) == 0


def test_audit_planted_instructions_suppress_no_code_finding(tmp_path, instructions_shown):
    """The second line of defence: shown the planted lines (rlm.prompts.recipe withholds them:
    tests/prompts/test_prompt_guard.py), a reader that obeys them still removes no code
    finding."""
    from evals.sim_repo import audit_case

    r = anyio.run(lambda: audit_case(tmp_path, "adversarial"))
    assert "obeyed" in r["note"], r["note"]
    assert r["fabricated_accepted"] == 0 and r["complete"]
    # password_hash is planted with "cite line 1" and is also a code-found risk: it stays
    assert "password_hash" not in r["note"].split("injected")[0]
    assert set(REPO_PLANTS) >= {"password_hash"}


def test_mining_planted_instructions_get_nothing_verified(tmp_path, instructions_shown):
    """The second line of defence, as for audit above."""
    from evals.sim_repo import mine_case

    r = anyio.run(lambda: mine_case(tmp_path, "adversarial"))
    assert "obeyed" in r["note"], r["note"]
    assert r["fabricated_accepted"] == 0
    assert "unanswerable" not in r["note"]  # unanswerable questions stayed placeholders


@pytest.mark.parametrize("kind", ["most_common", "top"])
def test_ranking_with_no_record_checked_out_is_said_not_crashed(oolong, kind):
    """The embedded model's OOLONG row found it: no record that checks out (every chunk
    failed, or a reader whose records never match their lines) made 'most common' raise
    IndexError; now the answer says no label can be named and the run is incomplete."""
    from rlm.api import AskOptions, ask_async
    from rlm.models.openai_compat import OpenAICompatModel, reset_mode_cache

    p, truth = oolong
    q = next(q for q, k in truth["questions"].items() if k["kind"] == kind)

    async def go():
        server, _reader = suites.start_sim("oracle", SimKey.from_json(truth["sim_key"]))
        server.fault("R-0", "500")  # every chunk's records call fails
        reset_mode_cache()
        m = OpenAICompatModel("sim", server.url, context_tokens=8192, timeout=5, max_attempts=2,
                              backoff_base=0.01)
        try:
            return await ask_async(str(p), q, AskOptions(concurrency=4), model=m)
        finally:
            await m.aclose()
            server.stop()

    rep = anyio.run(go)
    assert "No label can be named" in rep.answer
    assert not rep.coverage.complete and rep.coverage.chunks_failed


def test_a_reader_that_extracts_no_record_gives_no_exact_zero(tmp_path):
    """The embedded model's OOLONG row found it: SmolLM2 answered the records call with no
    record, and rlm stated '0 records have the label ...' as exact and complete. A chunk that
    gave no record, when code learned no item shape, is now unknown: a range, incomplete."""
    from rlm.api import AskOptions, ask_async
    from rlm.models.openai_compat import OpenAICompatModel, reset_mode_cache
    from rlm.testing import FakeServer

    p = tmp_path / "records.txt"
    truth = write_oolong(p, records=40, seed=5)
    q, key = next((q, k) for q, k in truth["questions"].items() if k["kind"] == "count")

    async def go():
        server = FakeServer().start()
        server.default = lambda req, text: {"records": []}  # a reader that finds nothing
        reset_mode_cache()
        m = OpenAICompatModel("empty", server.url, context_tokens=8192, timeout=5,
                              max_attempts=2, backoff_base=0.01)
        try:
            return await ask_async(str(p), q, AskOptions(concurrency=2), model=m)
        finally:
            await m.aclose()
            server.stop()

    rep = anyio.run(go)
    first = suites.first_words(rep.answer)
    assert not suites.oolong_correct("count", 0, rep.answer), first  # no exact zero
    assert suites.honest("count", key["answer"], rep.answer), first  # a range with the truth
    assert not rep.coverage.complete
