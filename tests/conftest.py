import os
import sys

import pytest

# tests/ is not a package: make tests/fake_server.py importable as `fake_server` however pytest
# was started (and for helper modules next to the tests).
_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from fake_server import FakeServer  # noqa: E402


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
