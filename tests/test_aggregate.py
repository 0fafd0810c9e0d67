"""Exact aggregation by code: the oracle extracts records through the real HTTP client, code
counts; a failed chunk turns every affected number into a range that holds the true value."""

from __future__ import annotations

import os
import re
from collections import Counter

import anyio
import pytest


from evals.sim.key import SimKey  # noqa: E402
from evals.sim.server import start_sim  # noqa: E402
from fixtures.oolong import answer_matches, write_oolong  # noqa: E402
from rlm.pipeline.aggregate import Record, check, item_shape, wants  # noqa: E402
from rlm.api import AskOptions, ask_async  # noqa: E402
from rlm.models.openai_compat import OpenAICompatModel, reset_mode_cache  # noqa: E402


@pytest.fixture(scope="module")
def oolong(tmp_path_factory):
    p = tmp_path_factory.mktemp("oolong") / "records.txt"
    return p, write_oolong(p, records=400, seed=3)


def ask_sim(path, question, truth, kind="oracle", faults=(), rates=None, seed=2):
    async def go():
        server, _reader = start_sim(kind, SimKey.from_json(truth["sim_key"]), seed=seed,
                                   rates=rates)
        for match, fault in faults:
            server.fault(match, fault)
        reset_mode_cache()
        model = OpenAICompatModel("sim", server.url, context_tokens=8192, timeout=5,
                                  max_attempts=2, backoff_base=0.01)
        try:
            return await ask_async(str(path), question, AskOptions(concurrency=4), model=model)
        finally:
            await model.aclose()
            server.stop()
    return anyio.run(go)


def test_oracle_gets_every_aggregation_question_exactly(oolong):
    path, truth = oolong
    kinds = set()
    for q, key in truth["questions"].items():
        rep = ask_sim(path, q, truth)
        field = key.get("field", "label")
        counts = truth["counts"] if field == "label" else Counter(
            r[field] for r in truth["sim_key"]["records"].values())
        assert rep.aggregate["counts"] == {k: v for k, v in counts.items() if v}
        assert rep.aggregate["unknown"] == 0 and rep.coverage.complete
        first = rep.answer.split("\n\n")[0]
        assert answer_matches(key, first), (key["kind"], key["answer"], first)
        kinds.add(key["kind"])
        # each number links to the items counted: every item of the asked label, with its line
        for lab in rep.aggregate["labels_asked"]:
            items = rep.aggregate["items"][lab]
            assert len(items) == counts[lab]
            assert all(truth["sim_key"]["records"][i]["label"] == lab for i, _p, _l in items)
        vals = rep.aggregate["value_items"]  # sums and averages: the very records added up
        if key["kind"] in ("sum", "mean"):
            want_ids = {r for r, v in truth["sim_key"]["records"].items()
                        if not key.get("label") or v["label"] == key["label"]}
            assert {i for i, _p, _l, _v in vals} == want_ids
            assert all(truth["sim_key"]["records"][i]["value"] == v for i, _p, _l, v in vals)
            assert f"{vals[0][0]} (line {vals[0][2]})" in rep.answer
        if key["kind"] == "max":
            assert rep.aggregate["result"] == key["answer"]
    assert kinds == {"count", "most_common", "more", "share", "percentage", "sum", "mean", "max",
                     "min", "top", "per_label", "mean_per_label", "sum_per_region"}


def test_failed_chunk_gives_a_range_that_holds_the_truth(oolong):
    path, truth = oolong
    q, key = next((q, k) for q, k in truth["questions"].items() if k["kind"] == "count")
    rep = ask_sim(path, q, truth, faults=[("R-00060 ", "500")])  # chunk c0002: lines 51-100
    failed = [c.chunk for c in rep.coverage.chunks_failed]
    assert failed == ["c0002"] and not rep.coverage.complete
    assert rep.aggregate["unknown"] == 50
    m = re.search(r"between ([\d,]+) and ([\d,]+) records have the label '(\w+)' \(chunk c0002 "
                  r"failed\)", rep.answer)
    assert m, rep.answer[:300]
    lo, hi = (int(x.replace(",", "")) for x in m.groups()[:2])
    assert lo <= key["answer"] <= hi and hi - lo == 50


def _nums(text):
    return [float(x.replace(",", "")) for x in re.findall(r"-?\d[\d,]*(?:\.\d+)?", text)]


@pytest.mark.parametrize("kind", ["sum", "mean", "percentage", "per_label", "top"])
def test_failed_chunk_gives_the_honest_bound_for_each_aggregate(oolong, kind):
    path, truth = oolong
    q, key = next((q, k) for q, k in truth["questions"].items()
                  if k["kind"] == kind and (kind != "sum" or k.get("label")))
    rep = ask_sim(path, q, truth, faults=[("R-00060 ", "500")])  # chunk c0002: lines 51-100
    first, why = rep.answer.split("\n\n")[:2]
    assert rep.aggregate["unknown"] == 50 and not rep.coverage.complete
    assert not answer_matches(key, first)  # never stated as if exact
    recs = truth["sim_key"]["records"]
    known = {r: v for r, v in recs.items() if not 51 <= int(r[2:]) <= 100}
    if kind == "sum":  # non-negative values: a lower bound, no upper bound
        lo = sum(v["value"] for v in known.values() if v["label"] == key["label"])
        assert first.startswith(f"Sum: at least {lo:,} ") and lo <= key["answer"]
        assert "c0002 failed" in why and "no upper bound is known" in why
    elif kind == "mean":  # the known records' average, said to be only theirs
        vals = [v["value"] for v in known.values() if v["label"] == key["label"]]
        assert f"of the known records: {sum(vals) / len(vals):.2f} (over {len(vals)} " in first
        assert "the average covers the known records only" in why
    elif kind == "percentage":
        lo, hi = _nums(first.split("between")[1])[:2]
        assert lo <= key["answer"] <= hi and abs((hi - lo) - 100 * 50 / 400) < 0.01
    elif kind == "per_label":
        for lab, n in key["answer"].items():
            m = re.search(rf"'{lab}' between (\d+) and (\d+)", first)
            assert m and int(m.group(1)) <= n <= int(m.group(2)) == int(m.group(1)) + 50
    else:  # top 3: the order is stated with what could change it
        assert "could change this order" in why or "cannot change this order" in why


def test_noisy_reader_skipping_records_widens_the_range(oolong):
    path, truth = oolong
    q, key = next((q, k) for q, k in truth["questions"].items() if k["kind"] == "more")
    none = {k: 0.0 for k in ("offby", "badquote", "fabricate", "dup", "schema", "refuse", "429",
                             "slow")}
    rep = ask_sim(path, q, truth, kind="noisy", rates={**none, "drop": 0.1})
    u = rep.aggregate["unknown"]
    assert u > 0 and "were not extracted" in rep.answer and not rep.coverage.complete
    m = re.search(r"between (-?[\d,]+) and (-?[\d,]+) more records", rep.answer)
    lo, hi = (int(x.replace(",", "")) for x in m.groups())
    assert lo <= key["answer"] <= hi


def test_records_are_checked_against_their_lines():
    line = "Date: Jan 03, 2023 || User: 76097 || ID: R-00007 || Instance: How tall is 3 m?"
    assert check(Record(line=5, item="R-00007", label="numeric"), line, 1, 10) is None
    assert "not on line" in check(Record(line=5, item="R-99999"), line, 1, 10)
    assert "outside the chunk" in check(Record(line=50, item="R-00007"), line, 1, 10)
    assert "value 4" in check(Record(line=5, item="R-00007", value=4), line, 1, 10)
    assert check(Record(line=5, item="R-00007", value=3), line, 1, 10) is None
    shape = item_shape(["R-00001", "R-00002", "R-00310"])
    assert shape.search(line) and not shape.search("ID: R-0001 ||")
    assert wants("How many more X than Y?") and wants("Which label is the most common?")
    assert not wants("What did the committee decide?")


def test_values_from_the_wrong_field_or_from_nowhere_are_never_added(oolong):
    path, truth = oolong
    q, key = next((q, k) for q, k in truth["questions"].items()
                  if k["kind"] == "sum" and not k.get("label"))  # every record's minutes
    quiet = {k: 0.0 for k in ("offby", "badquote", "fabricate", "dup", "schema", "refuse", "429",
                              "slow", "drop", "merge", "answer")}
    rep = ask_sim(path, q, truth, kind="noisy", rates={**quiet, "badvalue": 0.1})
    recs = truth["sim_key"]["records"]
    vals = rep.aggregate["value_items"]
    assert all(recs[i]["value"] == v for i, _p, _l, v in vals)  # no damaged value was added
    damaged = len(recs) - len(vals)
    assert damaged > 5 and rep.aggregate["rejected"] == damaged == rep.aggregate["unknown"]
    first = rep.answer.split("\n\n")[0]
    lo = int(sum(v for *_x, v in vals))
    assert first.startswith(f"Sum: at least {lo:,} ") and lo <= key["answer"]
    assert any("did not check out" in d for d in rep.coverage.declared)


def holds(key: dict, agg: dict) -> bool:
    """Whether code's result (exact, or the bound it states) holds the key's true answer."""
    want, res, kind = key["answer"], agg["result"], key["kind"]
    if kind in ("count", "per_label"):
        rng = res if kind == "per_label" else {key["label"]: res[key["label"]]}
        truth = want if kind == "per_label" else {key["label"]: want}
        return all(rng[lab]["low"] <= n <= rng[lab]["high"] for lab, n in truth.items())
    if kind in ("more", "share", "percentage"):
        w = want / 100 if kind == "percentage" else want
        return res["low"] - 1e-4 <= w <= res["high"] + 1e-4
    if kind == "sum":
        return res == want if not agg["unknown"] else res <= want
    if kind == "max":
        return res == want if not agg["unknown"] else res <= want
    if kind == "min":
        return res == want if not agg["unknown"] else res >= want
    if kind == "sum_per_region":  # non-negative sums: lower bounds when records are unknown
        return res == want if not agg["unknown"] else all(res.get(r, 0) <= n
                                                          for r, n in want.items())
    if kind in ("mean", "mean_per_label"):  # known records only: exact when none is unknown
        return bool(agg["unknown"]) or res == want
    return bool(agg["unknown"]) or res == want  # most common, top 3


@pytest.mark.parametrize("seed", [0, 1])
def test_noisy_reader_every_number_is_exact_or_a_bound_that_holds(oolong, seed):
    path, truth = oolong
    bad = []
    for q, key in truth["questions"].items():
        rep = ask_sim(path, q, truth, kind="noisy", rates={"slow": 0.0}, seed=seed)
        if not holds(key, rep.aggregate):
            bad.append((key["kind"], key["answer"], rep.answer.split("\n\n")[0]))
    assert not bad, bad


def test_a_tie_for_most_common_is_said():
    from rlm.pipeline.aggregate import Counted, Tally
    from rlm.pipeline.aggregate_ops import answer

    recs = [Counted(f"R-{i}", i, lab, None, "f") for i, lab in enumerate("aabbc", 1)]
    text, agg = answer("Which label is the most common?", Tally(records=recs))
    assert text.startswith("The most common label is 'a' (2 of 5 records), tied with 'b'.")
    text, _ = answer("Which label is the least common?", Tally(records=recs[:4]))
    assert "tied with" in text.split("\n\n")[0]
