"""A chunk always fits the model's context, or is split and retried: never dropped.

A non-ASCII-heavy file (emoji, CJK) against a small-context model profile, and a fake server that
counts tokens the way byte-level tokenizers do on such text (far more than chars/4) and answers
HTTP 400 "maximum context length" to a prompt that does not fit."""

from __future__ import annotations

import re

import anyio

from rlm.testing import Reply, prompt_text
from rlm.api import AskOptions, ask_async
from rlm.models.openai_compat import OpenAICompatModel, reset_mode_cache

CONTEXT = 1024
NUMBERED = re.compile(r"^(\d+)\| ", re.M)


def real_tokens(text: str) -> int:
    """A byte-level BPE's count on this text: ASCII ~3.5 chars a token, every other character
    ~1.5 bytes a token (an emoji is 2-3 tokens, a CJK character 2)."""
    ascii_n = sum(1 for ch in text if ord(ch) < 128)
    other = sum(len(ch.encode()) for ch in text if ord(ch) >= 128)
    return int(ascii_n / 3.5 + other / 1.5) + 1


def _emoji_file(tmp_path, n=600):
    p = tmp_path / "emoji_codes.txt"
    p.write_text("".join(f"{i}: 東京の天気は晴れ 🌞🌧️✨🎉 富士山 🗻🍣\n" for i in range(1, n + 1)),
                 encoding="utf-8")
    return p, n


def _strict_server(server, accepted: list[str]):
    def mapper(req, text):
        if real_tokens(prompt_text(req)) + req.get("max_tokens", 0) > CONTEXT:
            return Reply(status=400, body={"error": {
                "message": f"This model's maximum context length is {CONTEXT} tokens. However, "
                           "you requested more tokens.", "type": "invalid_request_error",
                "code": "context_length_exceeded"}})
        accepted.append(text)
        return {"findings": []}

    server.on("MapResult", mapper)
    server.default = mapper  # the same limit in every structured-output mode, plain text too


def test_non_ascii_chunks_fit_or_are_resplit_never_dropped(tmp_path, fake_server):
    p, n = _emoji_file(tmp_path)
    accepted: list[str] = []
    _strict_server(fake_server, accepted)
    reset_mode_cache()
    model = OpenAICompatModel("small", fake_server.url, context_tokens=CONTEXT, timeout=5.0,
                              max_attempts=2, backoff_base=0.01)
    rep = anyio.run(lambda: ask_async(str(p), "what is said about the weather?",
                                      AskOptions(strategy="fanout"), model=model))
    assert not rep.coverage.chunks_failed, rep.coverage.chunks_failed[:3]
    read = {int(m.group(1)) for t in accepted for m in NUMBERED.finditer(t)}
    assert read == set(range(1, n + 1))  # every line was read by an accepted call
    assert rep.coverage.lines_read_by_model == n and rep.coverage.complete
    # the estimate does most of the work: few calls are refused by the server
    refused = [r for r in fake_server.requests if r["status"] == 400]
    assert len(refused) <= max(2, len(accepted) // 5), (len(refused), len(accepted))


def test_a_chunk_the_server_refuses_as_too_long_is_split_and_retried(tmp_path, fake_server):
    """The model is declared with 4x the context the server really has: only the server's
    HTTP 400 can tell, and every refused chunk is split until its pieces fit."""
    p, n = _emoji_file(tmp_path, n=300)
    accepted: list[str] = []
    _strict_server(fake_server, accepted)
    reset_mode_cache()
    model = OpenAICompatModel("small", fake_server.url, context_tokens=4 * CONTEXT, timeout=5.0,
                              max_attempts=2, backoff_base=0.01)
    rep = anyio.run(lambda: ask_async(str(p), "what is said about the weather?",
                                      AskOptions(strategy="fanout"), model=model))
    refused = [r for r in fake_server.requests if r["status"] == 400]
    assert refused  # the server did refuse chunks
    assert not rep.coverage.chunks_failed and rep.coverage.complete
    read = {int(m.group(1)) for t in accepted for m in NUMBERED.finditer(t)}
    assert read == set(range(1, n + 1))
    assert "read in pieces" in rep.coverage.statement
    # a refusal is the prompt's fault: it is not retried as is, nor in other response modes
    assert len(refused) < len(accepted)
