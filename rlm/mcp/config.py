"""How `rlm mcp` was started: roots, transport and the model options shared with the CLI."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ServerConfig:
    roots: list[str] = field(default_factory=list)  # empty: the working directory
    model: str | None = None  # "sampling": the MCP client's model; None: RLM_MODEL, config, ...
    base_url: str | None = None  # one URL, or a comma list of replicas of one model
    sub_model: str | None = None
    concurrency: int = 4
    max_tokens: int | None = None  # default budget of one tool call (a call may lower it)
    max_calls: int | None = None
    timeout: float = 120.0
    sampling_context: int = 32_000  # context window assumed for the client's model
    http: str | None = None  # "HOST:PORT" for streamable HTTP; None: stdio

    @property
    def sampling(self) -> bool:
        import os

        spec = self.model if self.model is not None else os.environ.get("RLM_MODEL", "")
        return spec.strip() == "sampling"
