"""Simulated readers (evals/sim/) through the real HTTP client and the whole ask pipeline:
the oracle loses nothing on every path, the noisy reader's inventions are never accepted, and
the adversarial reader's obedience to planted instructions never becomes a verified finding."""

from __future__ import annotations

import os

import anyio
import pytest


from evals import sim_suite as S  # noqa: E402
from rlm.errors import UsageError  # noqa: E402


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    w = tmp_path_factory.mktemp("sim")
    return {c.name: c for c in S.log_cases(w, 3000) + S.transcript_cases(w, 300) + [S.notes_case(w)]}


def run(case, kind, **kw):
    return anyio.run(lambda: S.run_case(case, kind, **kw))


@pytest.mark.parametrize("name", ["log-anomalies", "log-needle", "transcript-story",
                                  "transcript-revised", "notes"])
def test_oracle_loses_nothing_on_every_path(cases, name):
    r = run(cases[name], "oracle")
    assert r["strategy"] == cases[name].expect
    assert r["recall"] == 1.0, r["note"]
    assert r["numbers_lost"] == 0 and r["misplaced"] == 0 and r["fabricated_accepted"] == 0
    assert r["complete"] and r["failures_named"]


def test_oracle_resolves_as_a_model_spec(cases, tmp_path):
    from rlm.api import AskOptions, ask

    c = cases["transcript-story"]
    spec = f"sim:oracle?key={c.path}.truth.json&context=2048"
    rep = ask(str(c.path), c.question, AskOptions(model=spec))
    assert rep.strategy == "fanout" and rep.model == "sim:oracle"
    cited = {f.source.line_start for f in rep.findings if f.verified}
    assert {19, 76, 133, 190, 271} <= cited or len(cited) == 5
    with pytest.raises(UsageError, match="answer key"):
        ask(str(c.path), c.question, AskOptions(model="sim:oracle"))
    with pytest.raises(UsageError, match="unknown simulated reader"):
        ask(str(c.path), c.question, AskOptions(model="sim:genius?key=x"))


NASTY = {"offby": 0.5, "badquote": 0.4, "fabricate": 0.6, "dup": 0.3, "drop": 0.1,
         "schema": 0.35, "refuse": 0.1, "429": 0.15, "slow": 0.1}


@pytest.mark.parametrize("name", ["transcript-story", "transcript-revised"])
def test_noisy_reader_never_gets_an_invention_verified(cases, name):
    r = run(cases[name], "noisy", seed=3, rates=NASTY, max_calls=60, max_wall_s=30)
    s = r["score"]
    # the damage really happened (else this test could not fail)
    assert s["damage"].get("fabricate", 0) + s["damage"].get("badquote", 0) >= 2
    assert r["fabricated_accepted"] == 0 and r["misplaced"] == 0
    assert s["offby_near_recovered"] == s["offby_near"]  # within +-2 lines: corrected by code
    assert r["failures_named"]  # failed chunks (if any) are in coverage and its statement
    assert r["calls"] <= 60


def test_noisy_failures_are_named_in_coverage(cases):
    r = run(cases["transcript-story"], "noisy", seed=1, rates={"schema": 0.8, "offby": 0,
            "badquote": 0, "fabricate": 0, "drop": 0, "dup": 0, "refuse": 0, "429": 0, "slow": 0})
    assert r["score"]["failed_chunks"], "the seeded schema violations should fail some chunk"
    assert r["failures_named"] and not r["complete"]


# notes (a direct read): its cites carry no quote, so a cited line is verified only when it
# shares a word with the answer (rlm/verify/support.py); this was an xfail until that check
@pytest.mark.parametrize("name", ["log-anomalies", "transcript-story", "notes"])
def test_adversarial_reader_cannot_plant_verified_evidence(cases, tmp_path, name, instructions_shown):
    adv = S.adversarial_copy(cases[name], tmp_path)
    r = run(adv, "adversarial")
    assert r["score"]["damage"].get("obeyed", 0) >= 1  # it did follow a planted instruction
    assert r["fabricated_accepted"] == 0 and r["misplaced"] == 0
    if name == "log-anomalies":  # code found the candidates: a model cannot suppress them
        assert r["recall"] == 1.0


def test_audit_oracle_finds_every_planted_fact_and_noise_gets_nothing_in(tmp_path):
    from evals.sim_repo import audit_case

    r = anyio.run(lambda: audit_case(tmp_path, "oracle"))
    assert r["recall"] == 1.0 and r["fabricated_accepted"] == 0 and r["complete"], r["note"]
    n = anyio.run(lambda: audit_case(tmp_path, "noisy", seed=0))
    assert "injected" in n["note"] and n["fabricated_accepted"] == 0, n["note"]


def test_mining_oracle_finds_every_fact_and_leaves_placeholders(tmp_path):
    from evals.sim_repo import mine_case

    r = anyio.run(lambda: mine_case(tmp_path, "oracle"))
    assert r["recall"] == 1.0 and r["fabricated_accepted"] == 0 and r["complete"]
    assert "unanswerable" not in r["note"]


# a picked line's claim is the model's words: it is verified only when the line supports it
# (rlm/verify/claim_support.py); before that check noisy seeds 0-5 got 1,2,2,1,3,0 inventions in
@pytest.mark.parametrize("seed", range(6))
def test_mining_noisy_reader_inventions_are_not_verified(tmp_path, seed):
    from evals.sim_repo import mine_case

    r = anyio.run(lambda: mine_case(tmp_path, "noisy", seed=seed))
    assert r["fabricated_accepted"] == 0


# the audit's lens and recheck picks likewise (before the check: 0,1,0,2,0,1 over seeds 0-5)
@pytest.mark.parametrize("seed", range(6))
def test_audit_noisy_pick_inventions_are_not_verified(tmp_path, seed):
    from evals.sim_repo import audit_case

    r = anyio.run(lambda: audit_case(tmp_path, "noisy", seed=seed))
    assert r["fabricated_accepted"] == 0, r["note"]
