"""Several endpoints serving one model (`--base-url A --base-url B`, or `A,B`): replicas.

Each call goes to the endpoint with the fewest calls in flight among those not backed off. An
endpoint whose call fails (after its own short retries) is backed off (1 s, doubling, at most
30 s) and the same call is tried on the others, so a chunk is lost only when every endpoint
failed it. Usage is counted per endpoint for the report (`usage.endpoints`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from rlm.errors import ContextTooLong, ModelCallError, ModelUnreachable
from rlm.models.base import Completion, Limits
from rlm.models.openai_compat import redact_url

BACKOFF_START, BACKOFF_CAP = 1.0, 30.0
MEMBER_ATTEMPTS = 2  # per endpoint and call: failing over beats retrying one that is down


@dataclass
class EndpointStats:
    url: str  # redacted
    calls: int = 0  # answered calls
    failures: int = 0  # calls that failed here (and were tried elsewhere)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    in_flight: int = 0
    consecutive_failures: int = 0
    backed_off_until: float = 0.0
    last_error: str | None = None

    def as_dict(self) -> dict:
        return {"url": self.url, "calls": self.calls, "failures": self.failures,
                "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "last_error": self.last_error}


class EndpointPool:
    """Model protocol over replicas of one model (OpenAICompatModel instances)."""

    def __init__(self, members: list, clock=time.monotonic):
        if not members:
            raise ValueError("an endpoint pool needs at least one endpoint")
        self.members = members
        for m in members:
            if hasattr(m, "max_attempts"):
                m.max_attempts = min(m.max_attempts, MEMBER_ATTEMPTS)
        self.name = members[0].name
        self.context_tokens = min(m.context_tokens for m in members)
        self.base_url = members[0].base_url  # the call cache keys "default" by the first one
        self.stats = [EndpointStats(redact_url(m.base_url)) for m in members]
        self._clock = clock

    @property
    def profile(self):
        return self.members[0].profile

    def describe(self) -> str:
        return f"{self.name} at {len(self.members)} endpoints: " + ", ".join(s.url for s in self.stats)

    def __repr__(self) -> str:
        return f"EndpointPool({self.name!r}, {[s.url for s in self.stats]})"

    def count_tokens(self, text: str) -> int:
        return self.members[0].count_tokens(text)

    def _order(self) -> list[int]:
        """Endpoints to try, best first: not backed off, then fewest in flight, then fewest calls."""
        now = self._clock()
        return sorted(range(len(self.members)), key=lambda i: (
            self.stats[i].backed_off_until > now, self.stats[i].backed_off_until
            if self.stats[i].backed_off_until > now else 0, self.stats[i].in_flight,
            self.stats[i].calls, i))

    async def complete(self, messages, schema, limits: Limits, schema_name: str = "result") -> Completion:
        errors: list[Exception] = []
        for i in self._order():
            st, m = self.stats[i], self.members[i]
            st.in_flight += 1
            try:
                comp = await m.complete(messages, schema, limits, schema_name=schema_name)
            except ContextTooLong:  # the prompt's fault, not the endpoint's: the caller splits
                raise
            except (ModelCallError, ModelUnreachable) as e:
                st.failures += 1
                st.consecutive_failures += 1
                st.last_error = str(e)[:160]
                st.backed_off_until = self._clock() + min(
                    BACKOFF_CAP, BACKOFF_START * 2 ** (st.consecutive_failures - 1))
                errors.append(e)
                continue
            finally:
                st.in_flight -= 1
            st.calls += 1
            st.consecutive_failures = 0
            st.backed_off_until = 0.0
            st.prompt_tokens += comp.usage.prompt_tokens
            st.completion_tokens += comp.usage.completion_tokens
            return comp
        if all(isinstance(e, ModelUnreachable) for e in errors):
            raise ModelUnreachable("no endpoint could be reached: " + "; ".join(
                f"{s.url}: {s.last_error}" for s in self.stats))
        err = ModelCallError(f"failed on all {len(self.members)} endpoints; last: {errors[-1]}")
        err.unreachable = all(isinstance(e, ModelUnreachable) or getattr(e, "unreachable", False)
                              for e in errors)
        raise err

    def usage_by_endpoint(self) -> list[dict]:
        return [s.as_dict() for s in self.stats]

    async def aclose(self) -> None:
        for m in self.members:
            await m.aclose()


def endpoint_usage(*models) -> list[dict]:
    """Per-endpoint usage of the pools among `models` (wrappers such as the call cache unwrapped)."""
    out: list[dict] = []
    seen: set[int] = set()
    for m in models:
        while m is not None and not isinstance(m, EndpointPool) and getattr(m, "inner", None) is not None:
            m = m.inner
        if isinstance(m, EndpointPool) and id(m) not in seen:
            seen.add(id(m))
            out.extend(m.usage_by_endpoint())
    return out
