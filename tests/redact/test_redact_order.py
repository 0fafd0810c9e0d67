"""Placeholders are given in the order prompts arrive, even when the pattern scans (run on
workers by an executor that offloads them, as the Ray executor does) finish in reverse order:
the prompts sent are the ones the local executor sends, placeholder for placeholder."""

from __future__ import annotations

import anyio

from rlm.executor import LocalExecutor, using
from rlm.models.base import Limits
from rlm.redact.model import Policy
from rlm.testing.scripted import ScriptedModel

EMAILS = [f"person{i}@example.org" for i in range(6)]


class ReverseOffload(LocalExecutor):
    """An executor whose offloaded work finishes last-submitted first (a slow first worker)."""

    def __init__(self):
        super().__init__(1)
        self.offloaded = 0

    async def offload(self, label, fn, *args):
        self.offloaded += 1
        mine = self.offloaded
        await anyio.sleep(0.05 * (len(EMAILS) + 1 - mine))  # the first waits longest
        return fn(*args)


def _prompts(executor) -> list[str]:
    model = ScriptedModel()
    policy = Policy(True, "test")
    wrapped = policy.wrap(model)

    async def send(i: int) -> None:
        body = f"chunk {i}: mail from {EMAILS[i]}\n" + "filler line\n" * 250  # offloaded: long
        await wrapped.complete([{"role": "user", "content": body}], None, Limits(max_tokens=5))

    async def main():
        async with anyio.create_task_group() as tg:
            for i in range(len(EMAILS)):
                tg.start_soon(send, i)
                await anyio.sleep(0)  # in this order

    with using(executor):
        anyio.run(main)
    return sorted(c.messages[0]["content"][:60] for c in model.calls)


def test_offloaded_scans_finishing_out_of_order_keep_the_local_numbering():
    ex = ReverseOffload()
    local, offloaded = _prompts(LocalExecutor(1)), _prompts(ex)
    assert ex.offloaded == len(EMAILS)
    assert offloaded == local
    assert local[0].startswith("chunk 0: mail from ⟨EMAIL_1⟩")
    assert not any(e in p for e in EMAILS for p in offloaded)
