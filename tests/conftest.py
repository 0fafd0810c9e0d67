import pytest

# tests/ is a package, so pytest puts the checkout on sys.path: tests import `evals`, `fixtures`
# and `tests.<helper>` by name; the fake server is rlm.testing's.
from rlm.testing import FakeServer


@pytest.fixture
def fake_server():
    """A scripted OpenAI-compatible server on 127.0.0.1 (fresh per test); .url ends in /v1."""
    server = FakeServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(autouse=True)
def _isolated_dirs(tmp_path, monkeypatch):
    """Every test gets its own call cache and run records (subprocesses inherit the env)."""
    monkeypatch.setenv("RLM_CACHE_DIR", str(tmp_path / "_rlm_cache"))
    monkeypatch.setenv("RLM_DATA_DIR", str(tmp_path / "_rlm_data"))
    monkeypatch.setenv("RLM_CONFIG_DIR", str(tmp_path / "_rlm_config"))  # calibration profiles


@pytest.fixture
def instructions_shown(monkeypatch):
    """The model is shown lines that read like instructions (rlm.corpus.instructions withholds
    them): for the tests of the second line of defence, as if the first had missed the line."""
    import rlm.corpus.instructions as ins

    monkeypatch.setattr(ins, "why_instruction", lambda line: None)
