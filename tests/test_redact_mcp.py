"""MCP sampling: prompts go to the client's model, whose location rlm cannot know, so they are
redacted by default. Driven with the official SDK's client against the real `rlm mcp` server."""

from __future__ import annotations

import json

import anyio

from rlm.testing.mcp_client import connect, structured

PLANTED = {"jane.doe@acme-corp.com", "4111 1111 1111 1111", "AKIAIOSFODNN7EXAMPLE"}


def test_sampling_prompts_are_redacted_by_default(tmp_path):
    from mcp_types import CreateMessageResult, TextContent

    p = tmp_path / "notes.txt"
    p.write_text("".join(f"note {i}: the quick brown fox\n" for i in range(1, 41))
                 + "note 41: refund to jane.doe@acme-corp.com on card 4111 1111 1111 1111\n"
                 + "note 42: deploy key AKIAIOSFODNN7EXAMPLE\n")
    asked: list = []

    async def sampling(context, params):
        asked.append(params)
        seen = params.messages[0].content.text
        ph = [w for w in seen.split() if w.startswith("⟨EMAIL_")]
        text = json.dumps({"answer": f"A refund went to {ph[0] if ph else 'nobody'}.",
                           "cites": [41]})
        return CreateMessageResult(role="assistant", content=TextContent(type="text", text=text),
                                   model="client-model-x")

    async def main():
        async with connect([tmp_path], "--model", "sampling", mode="legacy",
                           sampling_callback=sampling) as c:
            return await c.call_tool("ask", {"path": "notes.txt", "question": "who got a refund?",
                                             "strategy": "direct"})

    rep = structured(anyio.run(main))
    assert asked
    for params in asked:
        sent = (params.system_prompt or "") + "".join(m.content.text for m in params.messages)
        assert "note 41: refund to ⟨EMAIL_1⟩" in sent
        for v in PLANTED:
            assert v not in sent, v
    assert rep["redaction"]["enabled"] and "sampling" in rep["redaction"]["why"]
    assert rep["redaction"]["kinds"] == {"SECRET": 1, "EMAIL": 1, "CARD": 1}
    # locally the answer and the evidence are the original text
    assert "jane.doe@acme-corp.com" in rep["answer"]
    assert "4111 1111 1111 1111" in rep["findings"][0]["evidence"]
