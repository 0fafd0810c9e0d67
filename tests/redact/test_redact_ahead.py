"""A fan-out builds its prompts a batch ahead and redaction scans each batch in one pass
(rlm.engine.ahead, rlm.redact.model.RedactingModel.prescan): the real fake server receives the
very prompts it received when each was scanned as it was sent, placeholder for placeholder,
and no chunk's prompt is scanned on its own (issue 21, item 4)."""

from __future__ import annotations

import json

import anyio
import pytest

from rlm.api import AskOptions, ask_async
from rlm.engine.ahead import Ahead
from rlm.models.openai_compat import reset_mode_cache
from rlm.redact import batch, detect, model as redact_model
from tests.redact.test_redact_run import NUMBERED, SECRETS, map_quoting_errors, planted_log


def _chunk_prompt(text: str) -> bool:
    """A map prompt: the chunk's numbered lines (a synthesis prompt holds findings)."""
    return len(NUMBERED.findall(text)) > 5


@pytest.fixture
def scans(monkeypatch):
    """Counts of the texts scanned alone (pattern_hits) and in batches (pattern_hits_many)."""
    seen = {"alone": [], "batches": []}
    alone, many = detect.pattern_hits, batch.pattern_hits_many
    monkeypatch.setattr(detect, "pattern_hits", lambda t: seen["alone"].append(t) or alone(t))
    monkeypatch.setattr(redact_model, "pattern_hits_many",
                        lambda ts: seen["batches"].append(len(ts)) or many(ts))
    return seen


def _run(path, server, question="which errors happened?", **kw):
    reset_mode_cache()
    before = len(server.requests)
    opts = AskOptions(model="fake", base_url=server.url, timeout=5.0, redact=True,
                      strategy="fanout", usable_fraction=0.05, no_cache=True, **kw)
    rep = anyio.run(lambda: ask_async(str(path), question, opts))
    return rep, [json.dumps(r["body"]["messages"], ensure_ascii=False)
                 for r in server.requests[before:]]


def test_a_fanout_sends_the_prompts_it_sent_when_each_was_scanned_alone(
        tmp_path, fake_server, scans, monkeypatch):
    fake_server.on("MapResult", map_quoting_errors)
    p = tmp_path / "app.log"
    planted_log(p, lines=3000)
    ahead, sent_ahead = _run(p, fake_server, concurrency=1)
    chunks = ahead.coverage.chunks_total
    assert chunks > 3 and len(sent_ahead) >= chunks
    assert scans["batches"] and sum(scans["batches"]) >= chunks  # every chunk's prompt, batched
    assert not any(map(_chunk_prompt, scans["alone"]))  # no chunk's prompt scanned alone

    monkeypatch.setattr(redact_model.RedactingModel, "prescan", None, raising=False)
    scans["alone"].clear()
    each, sent_each = _run(p, fake_server, concurrency=1)
    assert sum(map(_chunk_prompt, scans["alone"])) >= chunks  # each scanned as it was sent
    assert sent_ahead == sent_each  # the same prompts, in the same order, same placeholders
    assert "⟨EMAIL_1⟩" in "".join(sent_ahead)
    for value in SECRETS:
        assert not any(value in b for b in sent_ahead), value
    assert ahead.redaction == each.redaction and ahead.redaction.values >= len(SECRETS)
    assert [(f.source.line_start, f.evidence) for f in ahead.findings] == \
        [(f.source.line_start, f.evidence) for f in each.findings]


def test_a_chunk_read_in_pieces_sends_each_piece_s_own_prompt(fake_server, monkeypatch, scans):
    """A chunk too big for the context is read in halves that share its id: each half must be
    sent as itself, not as the whole chunk's prompt built ahead (HPC_2k has one such chunk),
    and the halves' prompts are scanned in their batch, not alone when sent."""
    from pathlib import Path

    fake_server.on("MapResult", lambda req, text: {"findings": []})
    log = Path(__file__).resolve().parents[2] / "evals" / "data" / "loghub" / "HPC_2k.log"
    reset_mode_cache()

    def run():
        before = len(fake_server.requests)
        opts = AskOptions(model="fake", base_url=fake_server.url, timeout=5.0, redact=True,
                          strategy="fanout", no_cache=True, concurrency=1)
        rep = anyio.run(lambda: ask_async(str(log), "which errors happened?", opts))
        return rep, [json.dumps(r["body"]["messages"]) for r in fake_server.requests[before:]]

    ahead, sent_ahead = run()
    assert any("read in pieces" in d for d in ahead.coverage.declared)
    assert not any(map(_chunk_prompt, scans["alone"]))  # the pieces were scanned in a batch
    monkeypatch.setattr(redact_model.RedactingModel, "prescan", None, raising=False)
    each, sent_each = run()
    assert len(sent_ahead) > ahead.coverage.chunks_total  # the pieces went out one by one
    assert sent_ahead == sent_each


def test_several_workers_send_nothing_planted(tmp_path, fake_server, scans):
    fake_server.on("MapResult", map_quoting_errors)
    p = tmp_path / "app.log"
    planted_log(p, lines=3000)
    rep, sent = _run(p, fake_server, concurrency=4)
    assert rep.coverage.chunks_ok == rep.coverage.chunks_total > 3
    for value in SECRETS:
        assert not any(value in b for b in sent), value
    assert rep.redaction.values >= len(SECRETS)


class Scanning:
    """The one method Ahead looks for on a model: what it was handed, batch by batch."""

    def __init__(self):
        self.batches: list[list[str]] = []

    def prescan(self, texts):
        self.batches.append(list(texts))


def test_ahead_builds_each_prompt_once_a_batch_at_a_time():
    built = []

    def build(i: int):
        built.append(i)
        return [{"role": "system", "content": "S"}, {"role": "user", "content": "x" * 100 + str(i)}]

    model = Scanning()
    ahead = Ahead(model, build, key=str, chars=1_000)
    out = []
    for i in ahead.items(range(25)):
        out.append((i, ahead.messages(i)[1]["content"]))
        assert len(built) - i <= 10  # one batch ahead at most: ~1,000 characters of prompts
    assert [i for i, _ in out] == list(range(25)) and built == list(range(25))
    assert [len(b) for b in model.batches] == [20, 20, 10]  # system and user text each
    assert all(c.endswith(str(i)) for i, c in out)
    # an item whose prompt was not built ahead (a piece of a split chunk) is built when sent
    assert ahead.messages(99)[1]["content"].endswith("99") and built[-1] == 99


def test_a_chunk_too_big_is_built_and_scanned_in_its_pieces():
    """An item that does not fit is split as read_fitting splits it (recursively), and the
    batch holds its pieces' prompts, not its own; each piece, made again when read, gets its
    prompt, and read_fitting's fit questions are answered from the verdicts found ahead."""
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Item:
        id: str
        text: str

    def split(it: Item) -> list[Item]:
        h = len(it.text) // 2
        return [Item(it.id, it.text[:h]), Item(it.id, it.text[h:])] if h else []

    asked, built = [], []

    def fits(it: Item) -> bool:
        asked.append(it.text)
        return len(it.text) <= 10

    def build(it: Item):
        built.append(it.text)
        return [{"role": "user", "content": it.text}]

    model = Scanning()
    ahead = Ahead(model, build, key=lambda it: (it.id, it.text), fits=fits, split=split)
    small, big = Item("c1", "short"), Item("c2", "abcdefghijklmnopqrstuvwxyz0123456789")
    assert list(ahead.items([small, big])) == [small, big]
    pieces = ["abcdefghi", "jklmnopqr", "stuvwxyz0", "123456789"]  # 36 -> 18 -> 9
    assert model.batches == [["short", *pieces]]  # the whole big item is never scanned
    asked_ahead = len(asked)
    assert ahead.fits(small) and not ahead.fits(big)
    for half in split(big):
        assert not ahead.fits(Item(half.id, half.text))
        for quarter in split(half):
            again = Item(quarter.id, quarter.text)  # read_fitting makes its pieces anew
            assert ahead.fits(again)
            assert ahead.messages(again) == [{"role": "user", "content": quarter.text}]
    assert len(asked) == asked_ahead  # every fit question was answered from the verdicts
    assert built == ["short", *pieces]  # each prompt built once
    assert ahead.fits(Item("c9", "x" * 11)) is False and len(asked) == asked_ahead + 1


def test_without_prescan_nothing_is_built_ahead():
    built = []
    ahead = Ahead(object(), lambda i: built.append(i) or [{"role": "user", "content": "t"}],
                  key=str)
    it = ahead.items(iter(range(5)))
    assert next(it) == 0 and built == []
    assert ahead.messages(0) and built == [0]


def test_pieces_of_the_last_batch_s_item_are_still_built_ahead():
    """With several workers, one may still read an item's pieces when another's pull has
    built the next batch: the last batch's prompts are kept too (two batches, no more)."""
    built = []

    def split(t: str) -> list[str]:
        return [t[:len(t) // 2], t[len(t) // 2:]]

    ahead = Ahead(Scanning(), lambda t: built.append(t) or [{"role": "user", "content": t}],
                  key=str, fits=lambda t: len(t) <= 4, split=split, chars=1)
    it = ahead.items(["abcdefgh", "ij", "kl", "mn"])
    assert next(it) == "abcdefgh" and next(it) == "ij"  # the second batch is built
    assert [ahead.messages(p)[0]["content"] for p in split("abcdefgh")] == ["abcd", "efgh"]
    assert built == ["abcd", "efgh", "ij"]  # the pieces' prompts were not built again
    assert next(it) == "kl" and next(it) == "mn"
    assert ahead.messages("ij") and built[-1] == "ij"  # two batches back: built again
