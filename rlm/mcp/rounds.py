"""Sampling and roots on MCP 2026-07-28 connections: InputRequiredResult rounds (SEP-2322).

From protocol 2026-07-28 a server cannot send requests to the client in the middle of a call
(no back-channel; sampling and roots are deprecated, SEP-2577, but still defined). Instead a
tool call may answer `InputRequiredResult`: the requests it needs (`roots/list`,
`sampling/createMessage`), each under a key, plus an opaque `request_state`. The client fulfils
them with its own callbacks and retries the same call with the responses and the state (the
SDK's Client does this loop itself, up to `input_required_max_rounds`, default 10).

rlm keeps the run alive between rounds instead of replaying it: the state names a
`Conversation` held here (the SDK seals the state, so a client cannot forge or read it). Its run
works in a worker thread as on older connections; each sampling call registers its request and
waits. A round ends when the run has finished (the report is the call's result) or when its
calls are all waiting: once no new request came for SETTLE_S, every waiting request goes to the
client in one `InputRequiredResult` (the map's chunks in one round: up to --concurrency of them,
at least ROUND_BATCH).
The client's roots are asked for once per call, in its first round, and kept for its later ones.

A call the client abandons (no retry) is not lost: the requests it was sent time out like any
sampling call (--timeout, counted from the round that carried them), and a run that got no round
for 2 x --timeout + 5 s is stopped like a cancelled one: its report is recorded, with the
unfinished chunks interrupted, and `resume` finishes it.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from typing import Any, Awaitable, Callable

import anyio

SETTLE_S = 0.3  # a round closes once no new request came for this long
# requests per round at least (the run's concurrency, raised to this): the client bounds the
# rounds of one call (the SDK's Client: 10 by default), not the requests in flight
ROUND_BATCH = 32
IDLE_S = 900.0  # a conversation no round touched for this long is dropped (see idle_after)
ROOTS_KEY = "rlm-roots"
MODERN = "2026-07-28"

_conversations: dict[str, "Conversation"] = {}


def is_modern(ctx: Any) -> bool:
    """True on a 2026-07-28 (or later) connection: input comes in rounds, not requests."""
    from mcp_types.version import is_version_at_least

    v = getattr(ctx, "protocol_version", None)
    return v is not None and is_version_at_least(v, MODERN)


def declares(ctx: Any, capability: str) -> bool:
    """Whether the client declared `sampling` or `roots` for this request."""
    caps = getattr(ctx, "client_capabilities", None)
    return caps is not None and getattr(caps, capability, None) is not None


class Conversation:
    """One tool call's rounds: the client's roots and the run that waits on its sampling."""

    def __init__(self) -> None:
        self.token = secrets.token_urlsafe(18)
        self.client_roots: list[str] | None = None
        self.notes: list[str] = []
        self.task: asyncio.Task | None = None
        self.relay: Any = None
        self._n = 0
        # key -> (request, answer, sent): waiting for a round, then asked in one
        self._waiting: dict[str, tuple[Any, asyncio.Future, asyncio.Event]] = {}
        self._asked: dict[str, tuple[Any, asyncio.Future, asyncio.Event]] = {}
        self._last_new = 0.0
        self._changed = asyncio.Event()
        self.touched = time.monotonic()
        self.idle_s = IDLE_S

    # -- the client's answers
    def take(self, responses: dict | None) -> None:
        for key, resp in (responses or {}).items():
            if key == ROOTS_KEY:
                uris = [str(r.uri) for r in getattr(resp, "roots", None) or []]
                self.client_roots = uris
                continue
            entry = self._asked.pop(key, None)
            if entry is not None and not entry[1].done():
                entry[1].set_result(resp)

    def ask_roots(self):
        from mcp_types import InputRequiredResult, ListRootsRequest

        return InputRequiredResult(input_requests={ROOTS_KEY: ListRootsRequest()},
                                   request_state=self.token)

    # -- sampling requests from the run (on the server loop)
    async def sample(self, request: Any, timeout: float) -> Any:
        """Register one sampling request for the next round and wait for the client's answer:
        `timeout` counts from when a round carried it to the client (a queued request waits for
        the round; an abandoned conversation is stopped after IDLE_S)."""
        self._n += 1
        key = f"rlm-sample-{self._n}"
        fut = asyncio.get_running_loop().create_future()
        sent = asyncio.Event()
        self._waiting[key] = (request, fut, sent)
        self._last_new = time.monotonic()
        self._changed.set()
        try:
            await sent.wait()
            with anyio.fail_after(timeout):
                return await fut
        finally:
            self._waiting.pop(key, None)
            self._asked.pop(key, None)

    # -- the run
    def start(self, work: Callable[[], Awaitable[Any]], relay: Any, timeout: float) -> None:
        """Run work() on this loop; with `timeout` (each sampling request's), a client that
        sent no round for 2 x timeout + 5 s has given up on the call."""
        self.relay = relay
        self.idle_s = min(IDLE_S, 2 * timeout + 5.0)
        loop = asyncio.get_running_loop()
        self.task = loop.create_task(work())
        self.task.add_done_callback(lambda _t: self._changed.set())
        self._watchdog = loop.create_task(self._watch())

    async def _watch(self) -> None:
        """Stop the run once no round came for IDLE_S (the client gave up on the call)."""
        while self.task is not None and not self.task.done():
            await asyncio.sleep(min(30.0, self.idle_s / 4))
            if time.monotonic() - self.touched > self.idle_s:
                self.stop()
                return

    async def next_round(self, ctx: Any):
        """('done', result of the run) or ('input', InputRequiredResult) for this round."""
        from mcp_types import InputRequiredResult

        self.touched = time.monotonic()
        if self.relay is not None:
            self.relay.ctx = ctx  # progress goes to the request of this round
        resend = {k: rf for k, rf in self._asked.items() if not rf[1].done()}
        try:
            while True:
                assert self.task is not None
                if self.task.done():
                    forget(self)
                    return "done", self.task.result()
                quiet = time.monotonic() - self._last_new
                if (self._waiting or resend) and quiet >= SETTLE_S:
                    batch = {**resend, **self._waiting}
                    self._asked.update(batch)
                    self._waiting.clear()
                    for _req, _fut, sent in batch.values():
                        sent.set()
                    return "input", InputRequiredResult(
                        input_requests={k: rf[0] for k, rf in batch.items()},
                        request_state=self.token)
                self._changed.clear()
                with anyio.move_on_after(max(0.01, SETTLE_S - quiet) if self._waiting else 1.0):
                    await self._changed.wait()
        except anyio.get_cancelled_exc_class():
            self.stop()  # the client cancelled this round: the run stops (resumable) and records
            raise

    def stop(self) -> None:
        if self.task is not None and not self.task.done():
            self.task.cancel()
        forget(self)


def conversation(ctx: Any) -> Conversation:
    """The conversation this request continues (its answers taken), or a new one."""
    _drop_idle()
    conv = _conversations.get(getattr(ctx, "request_state", None) or "")
    if conv is None:
        conv = Conversation()
        _conversations[conv.token] = conv
    conv.take(getattr(ctx, "input_responses", None))
    conv.touched = time.monotonic()
    return conv


def forget(conv: Conversation) -> None:
    _conversations.pop(conv.token, None)


def _drop_idle() -> None:
    now = time.monotonic()
    for conv in [c for c in _conversations.values() if now - c.touched > c.idle_s]:
        conv.stop()


class InputNeeded(Exception):
    """The call needs the client's input first: its tool returns `result` (this round)."""

    def __init__(self, result: Any):
        super().__init__("input required")
        self.result = result
