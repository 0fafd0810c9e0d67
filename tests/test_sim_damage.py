"""The noisy reader damages what comes after the map step, through the real fake HTTP server:
merged claims that drop, alter or add a number or id are refused by the reducer, and numbers or
ids a model altered or invented in an answer are marked and named, never passed off as found.
Code's exact aggregates never go through a model's words at all."""

from __future__ import annotations

import os

import anyio
import pytest


from evals import sim_suite as S  # noqa: E402
from evals.sim.key import Item, QuestionKey, SimKey  # noqa: E402
from evals.sim.score import answer_damage_unflagged, damaged_merges_accepted  # noqa: E402
from evals.sim.server import start_sim  # noqa: E402
from fixtures.oolong import write_oolong  # noqa: E402
from rlm.verify.answer_check import FLAG, mark, unsupported  # noqa: E402
from rlm.api import AskOptions, ask_async  # noqa: E402
from rlm.engine.budget import Budget  # noqa: E402
from rlm.engine.reducer import numbers_and_ids, reduce_findings  # noqa: E402
from rlm.models.openai_compat import OpenAICompatModel, reset_mode_cache  # noqa: E402
from rlm.schemas.report import Finding, Source  # noqa: E402

QUIET = {k: 0.0 for k in ("offby", "badquote", "fabricate", "drop", "dup", "schema", "refuse",
                          "slow", "429", "merge", "answer", "badvalue")}


def _findings(n: int = 24) -> list[Finding]:
    return [Finding(id=f"f{i}", claim=f"Session S-{1000 + i} failed with code E{40 + i}",
                    evidence=f"12:00:{i:02d} session S-{1000 + i} error E{40 + i}",
                    source=Source(path="app.log", line_start=10 * i, line_end=10 * i),
                    verified=True) for i in range(1, n + 1)]


def _reduce(kind: str, rates: dict):
    async def go():
        server, reader = start_sim(kind, SimKey(), seed=5, rates=rates)
        reset_mode_cache()
        model = OpenAICompatModel("sim", server.url, timeout=5, max_attempts=2, backoff_base=0.01)
        try:
            out, info = await reduce_findings(model, _findings(), "which sessions failed?",
                                              fits=lambda a: len(a) <= 2, size=len,
                                              budget=Budget(max_calls=20), timeout=5)
        finally:
            await model.aclose()
            server.stop()
        return out, info, reader.log
    return anyio.run(go)


def test_reducer_merges_what_the_oracle_merges():
    out, info, _log = _reduce("oracle", None)
    assert len(out) < 24 and not any("refused" in m for m in info.log)
    # every number and id of the inputs is still there after the merges
    assert set().union(*(numbers_and_ids(f.claim) for f in _findings())) <= \
        set().union(*(numbers_and_ids(f.claim) for f in out))


def test_reducer_refuses_every_damaged_merge():
    out, info, log = _reduce("noisy", {**QUIET, "merge": 1.0})
    damage = [e for e in log if e["kind"] == "merge_damage"]
    assert {e["how"] for e in damage} == {"drop", "alter", "invent"}, damage
    assert sum("refused a merge" in m for m in info.log) == len(damage)
    assert any("it added" in m for m in info.log) and any("it dropped" in m for m in info.log)
    assert {f.claim for f in out} == {f.claim for f in _findings()}  # nothing merged, all kept
    assert damaged_merges_accepted([f.model_dump() for f in out], log) == 0
    assert info.stopped == "no_progress"


TICKETS_Q = "Which customers were charged twice, and on which invoices?"


def tickets_case(tmp_path) -> S.Case:
    """600 tickets, 40 of them double charges: too many findings for a 1k-token synthesis
    prompt, so the pipeline reduces them before it words the answer."""
    lines, items = [], []
    for i in range(1, 601):
        if i % 15:
            lines.append(f"Ticket T-{1000 + i}: routine note about {('login', 'shipping')[i % 2]} "
                         "preferences")
            continue
        lines.append(f"Ticket T-{1000 + i}: the customer reports that invoice INV-{5000 + i} "
                     f"was charged twice ({i} EUR)")
        items.append(Item(lines[-1][:60], f"T-{1000 + i}: invoice INV-{5000 + i} charged "
                          f"twice, {i} EUR", order=len(items)))
    p = tmp_path / "tickets.txt"
    p.write_text("\n".join(lines) + "\n")
    return S.Case("tickets", p, TICKETS_Q, SimKey({TICKETS_Q: QuestionKey(items)}), "fanout", 1024)


def test_pipeline_reduce_keeps_every_number_and_refuses_damaged_merges(tmp_path):
    case = tickets_case(tmp_path)
    want = set().union(*(numbers_and_ids(it.claim) for it in case.qk.items))
    good, _ = _ask(case, "oracle")
    assert good.reduce.rounds >= 1 and len(good.findings) < 40  # the oracle's merges went in
    assert want <= set().union(*(numbers_and_ids(f.claim) for f in good.findings))
    row = anyio.run(lambda: S.run_case(case, "oracle"))  # scored: merged places count
    assert row["recall"] == 1.0 and row["numbers_lost"] == 0, row.get("note")
    bad, log = _ask(case, "noisy", {**QUIET, "merge": 1.0})
    damage = [e for e in log if e["kind"] == "merge_damage"]
    assert len(damage) >= 10
    assert sum("refused a merge" in m for m in bad.reduce.log) == len(damage)
    assert damaged_merges_accepted([f.model_dump() for f in bad.findings], log) == 0
    assert want <= set().union(*(numbers_and_ids(f.claim) for f in bad.findings))


def test_a_chunk_denser_than_one_answer_is_named_not_silently_cut(tmp_path):
    """8 relevant lines a chunk, 3 findings an answer: the perfect reader reports 15 of 40, and
    rlm says which chunks may hold more (the loss was silent before)."""
    case = tickets_case(tmp_path)
    case.context = 4096
    rep, _ = _ask(case, "oracle")
    assert len([f for f in rep.findings if f.verified]) == 15 < len(case.qk.items)
    note = next(d for d in rep.coverage.declared if "most findings one call may return" in d)
    assert note.startswith(f"{rep.coverage.chunks_total} of {rep.coverage.chunks_total} chunks")


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    w = tmp_path_factory.mktemp("dmg")
    return {c.name: c for c in S.log_cases(w, 3000) + S.transcript_cases(w, 300)
            + [S.notes_case(w)]}


def _ask(case, kind, rates=None):
    async def go():
        server, reader = start_sim(kind, case.key, seed=1, rates=rates)
        reset_mode_cache()
        model = OpenAICompatModel("sim", server.url, context_tokens=case.context, timeout=5,
                                  max_attempts=2, backoff_base=0.01)
        try:
            rep = await ask_async(str(case.path), case.question, AskOptions(concurrency=4),
                                  model=model)
        finally:
            await model.aclose()
            server.stop()
        return rep, reader.log
    return anyio.run(go)


@pytest.mark.parametrize("name", ["transcript-story", "transcript-revised", "notes",
                                  "log-needle"])
def test_altered_or_invented_numbers_in_an_answer_are_marked(cases, name):
    case = cases[name]
    good, _ = _ask(case, "oracle")
    assert FLAG not in good.answer  # no false alarm on a perfect reader's answer
    bad, log = _ask(case, "noisy", {**QUIET, "answer": 1.0})
    assert bad.strategy == case.expect
    damage = [e for e in log if e["kind"] == "answer_damage"]
    assert damage
    assert answer_damage_unflagged(bad.answer, case.path, log) == []
    corpus = case.path.read_text()
    flagged = [e["token"] for e in damage if unsupported(e["token"], corpus)]
    for tok in flagged:
        assert f"{tok} {FLAG}" in bad.answer, bad.answer[:400]
    if flagged:
        assert any(flagged[0] in d and "not in" in d for d in bad.coverage.declared)
    # the model's wording never changes what code verified
    assert {(f.source.line_start, f.claim) for f in bad.findings if f.verified} == \
        {(f.source.line_start, f.claim) for f in good.findings if f.verified}


def test_an_aggregate_is_never_worded_by_a_model(tmp_path):
    p = tmp_path / "records.txt"
    truth = write_oolong(p, records=200, seed=4)
    key = SimKey.from_json(truth["sim_key"])
    q = next(q for q, k in truth["questions"].items() if k["kind"] == "mean_per_label")
    case = S.Case("oolong", p, q, key, "fanout", 8192)
    good, _ = _ask(case, "oracle")
    bad, _ = _ask(case, "noisy", {**QUIET, "answer": 1.0, "merge": 1.0})
    assert bad.answer == good.answer and FLAG not in bad.answer
    assert bad.aggregate["result"] == {k: v for k, v in truth["questions"][q]["answer"].items()}


def test_mark_and_unsupported_read_numbers_as_numbers():
    support = "12:00:07 session S-1007 took 1,234 ms; ERR-77 at 2024-01-05T14:02:11Z"
    assert unsupported("S-1007 took 1234 ms at 14:02 on 5 January 2024 (ERR-77)", support) == []
    assert unsupported("S-1008 took 123 ms; R-77", support) == ["S-1008", "123", "R-77"]
    assert mark("S-1008 and S-1007", ["S-1008"]) == f"S-1008 {FLAG} and S-1007"
