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


def test_a_chunk_read_in_pieces_sends_each_piece_s_own_prompt(fake_server, monkeypatch):
    """A chunk too big for the context is read in halves that share its id: each half must be
    sent as itself, not as the whole chunk's prompt built ahead (HPC_2k has one such chunk)."""
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


def test_a_prompt_built_ahead_goes_only_to_its_own_item():
    """Pieces of a split chunk share its key: each is built when sent, the chunk's prompt is
    never given to them."""
    class Item:
        def __init__(self, key, text):
            self.key, self.text = key, text

    ahead = Ahead(Scanning(), lambda it: [{"role": "user", "content": it.text}],
                  key=lambda it: it.key)
    whole = Item("c0001", "all of the chunk")
    assert list(ahead.items([whole])) == [whole]
    half = Item("c0001", "its first half")
    assert ahead.messages(half)[0]["content"] == "its first half"
    assert ahead.messages(whole)[0]["content"] == "all of the chunk"


def test_without_prescan_nothing_is_built_ahead():
    built = []
    ahead = Ahead(object(), lambda i: built.append(i) or [{"role": "user", "content": "t"}],
                  key=str)
    it = ahead.items(iter(range(5)))
    assert next(it) == 0 and built == []
    assert ahead.messages(0) and built == [0]
