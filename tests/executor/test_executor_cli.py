"""Choosing the executor from the command line (no Ray cluster needed): a one-line error with
exit 2 when the ray extra is missing or the name is unknown; `rlm config set executor`."""

from __future__ import annotations

import sys

import pytest
from typer.testing import CliRunner

from rlm.cli import app
from rlm.fixtures.log import write_log


@pytest.fixture
def log(tmp_path):
    p = tmp_path / "app.log"
    write_log(p, lines=500)
    return str(p)


@pytest.fixture
def no_ray(monkeypatch):
    """`import ray` fails, as without the extra."""
    monkeypatch.setitem(sys.modules, "ray", None)


def _rlm(*args):
    return CliRunner().invoke(app, list(args))


def test_ray_without_the_extra_is_one_line_and_exit_2(log, no_ray):
    r = _rlm("ask", log, "anomalies?", "--executor", "ray")
    assert r.exit_code == 2
    assert r.output.strip() == "rlm: --executor ray needs the ray extra: pip install 'rlm[ray]'"


def test_unknown_executor_and_stray_address_are_usage_errors(log, monkeypatch, no_ray):
    r = _rlm("ask", log, "anomalies?", "--executor", "spark")
    assert r.exit_code == 2 and "unknown executor 'spark'" in r.output
    assert len(r.output.strip().splitlines()) == 1
    r = _rlm("ask", log, "anomalies?", "--ray-address", "127.0.0.1:6379")
    assert r.exit_code == 2 and "--ray-address needs --executor ray" in r.output
    monkeypatch.setenv("RLM_EXECUTOR", "ray")  # the environment chooses ray
    r = _rlm("ask", log, "anomalies?")
    assert r.exit_code == 2 and "needs the ray extra" in r.output


def test_config_sets_the_executor(log, no_ray):
    assert _rlm("config", "set", "executor", "Ray").exit_code == 0
    assert "executor" in _rlm("config", "show").output
    r = _rlm("ask", log, "anomalies?")
    assert r.exit_code == 2 and "needs the ray extra" in r.output
    r = _rlm("config", "set", "executor", "dask")
    assert r.exit_code == 2 and "expected local or ray" in r.output
    r = _rlm("ask", log, "anomalies?", "--executor", "local", "--json")
    assert r.exit_code == 0 and '"name": "local"' in r.output


def test_ray_starts_only_after_the_model_server_answers(log):
    pytest.importorskip("ray", reason="the ray extra is not installed: pip install 'rlm[ray]'")
    import socket
    import time

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    t0 = time.monotonic()
    r = _rlm("ask", log, "what happened?", "--model", "m", "--base-url", dead,
             "--executor", "ray")
    assert r.exit_code == 2
    assert len(r.output.strip().splitlines()) == 1 and "cannot reach model server" in r.output
    assert "Ray" not in r.output  # no local Ray instance was started for nothing
    assert time.monotonic() - t0 < 15  # a local Ray start alone takes 5-30 s here
