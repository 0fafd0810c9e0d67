"""Model choice: --model > RLM_MODEL > the user config file > none; `rlm config`, `rlm models`,
`rlm --version`. Subprocess runs of the real CLI; discovery against the real fake server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from urllib.parse import urlsplit

import pytest

from rlm.errors import UsageError
from rlm.models import config
from rlm.models.registry import choose, resolve_model
from rlm.testing.cli import run_cli  # in-process: a process per call costs seconds


def rlm(*args, env=None, timeout=60):
    e = {k: v for k, v in os.environ.items()
         if k not in ("RLM_MODEL", "RLM_BASE_URL", "OPENAI_API_KEY")}
    e.update(env or {})
    return run_cli(*args, env=e)


@pytest.fixture
def clean_env(monkeypatch):
    for k in ("RLM_MODEL", "RLM_BASE_URL", "RLM_API_KEY"):
        monkeypatch.delenv(k, raising=False)


def test_resolution_order(clean_env, monkeypatch):
    assert (choose().spec, choose().source) == ("none", "nothing configured")
    config.set_value("model", "from-config")
    config.set_value("base_url", "http://127.0.0.1:9/v1,http://127.0.0.1:10/v1")
    ch = choose()
    assert (ch.spec, ch.source, ch.urls) == ("from-config", "config file",
                                             ["http://127.0.0.1:9/v1", "http://127.0.0.1:10/v1"])
    monkeypatch.setenv("RLM_MODEL", "from-env")
    assert choose().spec == "from-env"
    assert choose("from-flag").spec == "from-flag" and choose("from-flag").source == "--model"
    assert resolve_model("none").name == "none"
    config.unset("model")
    monkeypatch.delenv("RLM_MODEL")
    assert choose().spec == "default"  # only a base URL: whatever the server serves
    config.unset("base_url")
    assert choose().spec == "none"


def test_config_file_is_validated(clean_env):
    with pytest.raises(UsageError, match="unknown config key"):
        config.set_value("api_key", "sk-x")
    with pytest.raises(UsageError, match="credentials"):
        config.set_value("base_url", "http://user:pw@host:1/v1")
    config.config_path().parent.mkdir(parents=True, exist_ok=True)
    config.config_path().write_text("{not json")
    with pytest.raises(UsageError, match="not valid JSON"):
        choose()


def test_config_cli_and_version():
    r = rlm("config", "set", "model", "qwen")
    assert r.returncode == 0, r.stderr
    r = rlm("config", "show")
    assert r.returncode == 0 and "model = qwen" in r.stdout and "would use: qwen (from config file)" in r.stdout
    v = rlm("--version")
    assert v.returncode == 0 and v.stdout.startswith("rlm 0.") and "model: qwen (from config file)" in v.stdout
    assert "model: override (from RLM_MODEL)" in rlm("--version", env={"RLM_MODEL": "override"}).stdout
    bad = rlm("config", "set", "colour", "red")
    assert bad.returncode == 2 and bad.stderr.strip().startswith("rlm: unknown config key")
    assert rlm("config", "unset", "model").returncode == 0
    assert "model: none (code only" in rlm("--version").stdout


def test_models_lists_servers_without_sending_them_data(fake_server):
    port = urlsplit(fake_server.url).port
    r = rlm("models", "--json", env={"RLM_DISCOVER_PORTS": f"{port}:fake,1:nothing"})
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["spec"] == "none" and d["local_extra"] in (True, False)
    assert [s["url"] for s in d["servers"]] == [f"http://127.0.0.1:{port}/v1"]
    assert d["servers"][0]["name"] == "fake" and d["servers"][0]["models"]
    assert fake_server.requests == []  # listing only: no chat call, no corpus text
    text = rlm("models", env={"RLM_DISCOVER_PORTS": f"{port}:fake"}).stdout
    assert f"fake: --base-url http://127.0.0.1:{port}/v1" in text and "local extra" in text


def test_base_url_repeated_or_comma_list(clean_env):
    ch = choose("m", ["http://a:1/v1,http://b:2/v1", "http://c:3/v1", "http://a:1/v1"])
    assert ch.urls == ["http://a:1/v1", "http://b:2/v1", "http://c:3/v1"]
    m = resolve_model("m", "http://a:1/v1,http://b:2/v1")
    assert type(m).__name__ == "EndpointPool" and "2 endpoints" in m.describe()
    assert m.profile.tier == "served" and m.profile.prompt_tps is None  # no speed, no seconds
    with pytest.raises(UsageError, match="invalid base URL"):
        resolve_model("m", "http://a:1/v1,localhost:2")
