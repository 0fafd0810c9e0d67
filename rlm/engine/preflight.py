"""Before the corpus is read: is the model server there, and does it let us in?

One cheap `GET {base_url}/models` per configured endpoint, so an unreachable or misconfigured
server is a one-line error (exit 2) in a second, not after minutes of scanning a big file.
A server without that route (404, 405, ...) is given the benefit of the doubt: only "nothing
answers" and "the key is refused" are certain enough to stop a run here.
"""

from __future__ import annotations

import httpx

from rlm.errors import ModelUnreachable

PROBE_TIMEOUT_S = 5.0


def _endpoints(model) -> list[tuple[str, str | None]]:
    """(base_url, api_key) of every HTTP endpoint behind `model` (through wrappers)."""
    seen, out = set(), []
    stack = [model]
    while stack:
        m = stack.pop()
        if m is None or id(m) in seen:
            continue
        seen.add(id(m))
        url = m.__dict__.get("base_url") if hasattr(m, "__dict__") else None
        if isinstance(url, str) and url.startswith(("http://", "https://")):
            out.append((url, m.__dict__.get("_api_key")))
        stack.extend(m.__dict__.get(k) for k in ("inner", "model") if hasattr(m, "__dict__"))
        stack.extend(m.__dict__.get("models") or [] if hasattr(m, "__dict__") else [])
    return out


async def check_endpoints(model, timeout: float = PROBE_TIMEOUT_S) -> None:
    """Raise ModelUnreachable (a UsageError: exit 2) when no endpoint of `model` answers, or
    when one refuses the API key. Models without an HTTP endpoint pass."""
    from rlm.models.urls import redact_url

    eps = _endpoints(model)
    if not eps:
        return
    problems = []
    async with httpx.AsyncClient(timeout=httpx.Timeout(timeout)) as client:
        for url, key in eps:
            headers = {"Authorization": f"Bearer {key}"} if key else {}
            shown = redact_url(url)
            try:
                r = await client.get(url.rstrip("/") + "/models", headers=headers)
            except httpx.TimeoutException:
                problems.append(f"cannot reach model server at {shown}: no answer in {timeout:g} s")
                continue
            except httpx.HTTPError as e:
                from rlm.models.http_errors import _conn_cause

                problems.append(f"cannot reach model server at {shown}: {_conn_cause(e)}")
                continue
            if r.status_code in (401, 403):
                problems.append(f"model server at {shown} answered HTTP {r.status_code} to "
                                "GET /models (check the API key)")
                continue
            return  # one endpoint answers: the run can go on (failover handles the others)
    msg = problems[0] if len(problems) == 1 else "; ".join(problems)
    if key_text := next((k for _, k in eps if k), None):
        msg = msg.replace(key_text, "***")
    raise ModelUnreachable(msg)
