"""A `Model` that redacts every prompt before it leaves the machine, and when to use it.

``RedactingModel`` wraps any model (map, judge, merge, synthesis, repo recipes, MCP sampling):
each message goes out with secrets and personal data replaced by the run's placeholders (see
rlm.redact.detect), and the reply comes back with the placeholders it repeated mapped back, so code can
check a quote against the file. It sits *outside* the call cache, so the cache is keyed by the
redacted prompt and stores the reply as the remote model wrote it: the corpus's secrets never
reach the cache while redaction is on.

The choice (``decide``): ``--redact/--no-redact`` > ``RLM_REDACT`` > ``redact`` in the user
config file > on when any endpoint is not on loopback (the host is resolved, nothing is sent),
off for loopback and in-process models. ``--redact-report`` also masks the local report and the
run record; it implies redaction.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import socket
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from rlm.errors import UsageError
from rlm.models import config
from rlm.models.base import Completion, Limits, Model
from rlm.models.config import parse_switch  # noqa: F401 - also read from here by the CLI
from rlm.redact.batch import pattern_hits_many
from rlm.redact.detect import pattern_hits
from rlm.redact.redactor import Redactor

OFFLOAD_CHARS = 2_000  # a message this long is scanned on a Ray worker (the chunk, not the system text)
AHEAD_CHARS = 8_000_000  # prescanned texts not yet sent, at most (chars): what a run stopped
# before sending is dropped oldest first


class InOrder:
    """Placeholders are given in the order prompts arrive, even when their pattern scans finish
    out of order (on Ray workers): each prompt waits for the one before it, so the numbering,
    hence the prompts and the call cache's keys, are the local executor's."""

    def __init__(self) -> None:
        self._tail: Any = None

    def ticket(self) -> tuple[Any, Any]:
        import anyio

        prev, self._tail = self._tail, anyio.Event()
        return prev, self._tail


class RedactingModel:
    def __init__(self, inner: Model, redactor: Redactor, order: InOrder | None = None):
        self.inner = inner
        self.redactor = redactor
        self.order = order or InOrder()
        self.name = inner.name
        self.context_tokens = inner.context_tokens
        self._ahead: OrderedDict[str, list] = OrderedDict()  # text -> its pattern hits
        self._ahead_chars = 0

    def __getattr__(self, attr: str) -> Any:  # base_url, forget, describe, speed, ...
        return getattr(self.inner, attr)

    def __repr__(self) -> str:
        return f"RedactingModel({self.inner!r})"

    def redact_messages(self, messages: list[dict[str, str]],
                        found: dict[str, list] | None = None) -> list[dict[str, str]]:
        out = []
        first_user = True
        for m in messages:
            content = m.get("content")
            if isinstance(content, str):
                # the first user message carries the material; a retry repeats it (counted once)
                count = m.get("role") == "user" and first_user
                first_user = first_user and m.get("role") != "user"
                m = {**m, "content": self.redactor.redact(content, count_prompt=count,
                                                          found=(found or {}).get(content))}
            out.append(m)
        return out

    async def complete(self, messages: list[dict[str, str]], schema: dict[str, Any] | None,
                       limits: Limits, schema_name: str = "result") -> Completion:
        comp = await self.inner.complete(await self._redacted(messages), schema, limits,
                                         schema_name=schema_name)
        comp.text = self.redactor.restore(comp.text)
        comp.data = self.redactor.restore_data(comp.data)
        return comp

    def prescan(self, texts: list[str]) -> None:
        """Scan the texts of prompts about to be sent in one pass (rlm.redact.batch; a fan-out
        hands its next batch, rlm.engine.ahead): when each is sent, its hits are here and
        only its placeholders are left to give, in the order sent. On the Ray executor each
        prompt's scan runs on a worker instead (see _offloaded), so nothing is done here."""
        if _offload() is not None:
            return
        new = [t for t in dict.fromkeys(texts) if t and t not in self._ahead]
        for t, hits in zip(new, pattern_hits_many(new)):
            self._ahead[t] = hits
            self._ahead_chars += len(t)
        while self._ahead_chars > AHEAD_CHARS:
            self._ahead_chars -= len(self._ahead.popitem(last=False)[0])

    def redact_now(self, messages: list[dict[str, str]]) -> list[dict[str, str]]:
        """The messages redacted here and now, from their prescanned hits where there are."""
        found = {}
        for m in messages if self._ahead else ():
            c = m.get("content")
            if isinstance(c, str) and (hits := self._ahead.pop(c, None)) is not None:
                found[c] = hits
                self._ahead_chars -= len(c)
        return self.redact_messages(messages, found)

    async def _redacted(self, messages: list[dict[str, str]]) -> list[dict[str, str]]:
        offload, texts = _offloaded(messages)
        if offload is None:  # the local executor: scanned here, at once
            return self.redact_now(messages)
        prev, mine = self.order.ticket()
        try:
            hits = await asyncio.gather(*(offload("redact", pattern_hits, t) for t in texts))
            if prev is not None:
                await prev.wait()
            return self.redact_messages(messages, {t: h for t, h in zip(texts, hits)
                                                   if h is not None})
        finally:
            mine.set()

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    async def aclose(self) -> None:
        await self.inner.aclose()


def _offload():
    """The run's executor's way to run a function elsewhere (Ray's), or None (local)."""
    from rlm.executor import current

    return getattr(current(), "offload", None)


def _offloaded(messages: list[dict[str, str]]) -> tuple[Any, list[str]]:
    """On the Ray executor, the pattern scan of each long message (rlm.redact.detect.pattern_hits,
    the costly part of redaction, a pure function of the text) runs as a Ray task, a prompt's
    all at once; the placeholders are still given here, by the run's one Redactor, in the
    prompts' order (InOrder), so a prompt is redacted exactly as on the local executor. A task
    that failed gives None: that text is scanned here. Local: (None, [])."""
    offload = _offload()
    texts = list(dict.fromkeys(c for m in messages if isinstance(c := m.get("content"), str)
                               and len(c) >= OFFLOAD_CHARS))
    return (offload, texts) if offload is not None and texts else (None, [])


# ------------------------------------------------------------------------------------ the choice

@dataclass
class Policy:
    """Whether this run redacts, why, and the run's one Redactor (shared by all its models)."""

    enabled: bool
    why: str
    report: bool = False  # --redact-report: mask the local report and the run record too
    redactor: Redactor = field(default_factory=Redactor)
    order: InOrder = field(default_factory=InOrder)  # one order for all of the run's models

    def wrap(self, model: Model | None) -> Model | None:
        if model is None or not self.enabled or isinstance(model, RedactingModel):
            return model
        return RedactingModel(model, self.redactor, self.order)

    def summary(self) -> dict:
        """The report's ``redaction`` field."""
        r = self.redactor
        return {"enabled": self.enabled, "why": self.why, "report_masked": self.report,
                "values": r.values, "prompts": r.prompts, "kinds": r.counts()}


def _config_value() -> str | None:
    """``redact`` in the user config file (`rlm config set redact on|off`), if set."""
    return config.load().get("redact")


def endpoints(model: Any) -> list[str]:
    """Base URLs of a model and of the models it wraps (cache, replicas); [] when in-process."""
    seen, out, todo = set(), [], [model]
    while todo:
        m = todo.pop()
        if m is None or id(m) in seen:
            continue
        seen.add(id(m))
        d = getattr(m, "__dict__", {})  # own attributes only: no __getattr__ forwarding
        for name in ("base_url", "base_urls", "urls"):
            v = d.get(name)
            for u in ([v] if isinstance(v, str) else v if isinstance(v, (list, tuple)) else []):
                out.extend(x.strip() for x in str(u).split(",") if x.strip())
        for name in ("inner", "models", "replicas", "endpoints", "members"):
            v = d.get(name)
            todo.extend(v if isinstance(v, (list, tuple)) else [v])
    return out


def _is_sampling(model: Any) -> bool:
    """MCP sampling (rlm.mcp.sampling): the prompt leaves through the client, to its model."""
    while model is not None:
        if getattr(model, "__dict__", {}).get("name", getattr(type(model), "name", None)) == "sampling":
            return True
        model = getattr(model, "__dict__", {}).get("inner")
    return False


def is_loopback_host(host: str) -> bool:
    """True when every address the host resolves to is loopback. Only name resolution happens
    (an IP literal or ``localhost`` needs none); nothing is sent to the host."""
    h = host.strip().strip("[]").lower()
    if not h:
        return False
    if h == "localhost" or h.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(h.split("%")[0]).is_loopback
    except ValueError:
        pass
    if h.endswith(".invalid"):
        return False
    try:
        infos = socket.getaddrinfo(h, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return False  # unknown: treated as remote, so redaction stays on
    addrs = {i[4][0].split("%")[0] for i in infos}
    return bool(addrs) and all(ipaddress.ip_address(a).is_loopback for a in addrs)


def remote_endpoints(model: Any) -> list[str]:
    from rlm.models.urls import redact_url

    out = []
    for u in endpoints(model):
        try:
            host = urlsplit(u).hostname or ""
        except ValueError:
            host = ""
        if not is_loopback_host(host):
            out.append(redact_url(u))
    return out


def decide(models: list[Any], flag: bool | None = None, report: bool = False) -> Policy:
    """The run's redaction policy (see the module docstring for the order)."""
    where = None
    if flag is not None:
        enabled, where = flag, "--redact" if flag else "--no-redact"
    elif os.environ.get("RLM_REDACT", "").strip():
        enabled, where = parse_switch(os.environ["RLM_REDACT"], "RLM_REDACT"), "RLM_REDACT"
    elif (cv := _config_value()) is not None:
        enabled, where = parse_switch(cv, "config redact"), "the config file"
    if report and where is not None and not enabled:
        raise UsageError("--redact-report masks what redaction finds: it cannot be combined "
                         f"with redaction turned off ({where})")
    if where is not None:
        return Policy(enabled, f"set by {where}", report)
    if report:
        return Policy(True, "--redact-report", report)
    if any(_is_sampling(m) for m in models if m is not None):
        return Policy(True, "on by default: sampling sends prompts to the MCP client's model, "
                            "which may run anywhere", report)
    remote = [u for m in models if m is not None for u in remote_endpoints(m)]
    if remote:
        return Policy(True, f"on by default: {remote[0]} is not on loopback", report)
    if any(endpoints(m) for m in models if m is not None):
        return Policy(False, "off by default: every model endpoint is on loopback", report)
    return Policy(False, "off by default: the model runs in this process", report)


# ------------------------------------------------------------------------------------ reports

def declare(policy: Policy | None, report, declared: list[str]) -> None:
    """The report's ``redaction`` field, and the coverage note that states it."""
    if policy is None:
        return
    from rlm.schemas.report import RedactionInfo

    report.redaction = RedactionInfo(**policy.summary())
    if policy.enabled:
        declared.append(policy.redactor.statement() or "redaction was on and found no secret or "
                        "personal data in what was sent")


def mask_report(report, policy: Policy):
    """--redact-report: the same report with every string redacted (same placeholders as the
    prompts). Evidence was checked against the file before this; only its display is masked."""
    data = report.model_dump(mode="json")
    counts = data.pop("redaction", None)  # what left the machine, not what the report holds
    data = policy.redactor.mask_data(data)
    data["redaction"] = counts
    return type(report).model_validate(data)


def declare_in_statement(policy: Policy, report) -> None:
    """For reports whose coverage statement is already written (audit, mine): the redaction
    note goes in before the statement's last words (Complete / INCOMPLETE)."""
    cov = getattr(report, "coverage", None)
    if cov is None or not hasattr(report, "redaction"):
        return
    notes: list[str] = []
    declare(policy, report, notes)
    if not notes or getattr(report, "dry_run", False):
        return
    st = cov.statement or ""
    cut = max(st.rfind(" Complete."), st.rfind(" INCOMPLETE"))
    note = f" Note: {notes[0]}."
    cov.statement = st[:cut] + note + st[cut:] if cut >= 0 else st + note
