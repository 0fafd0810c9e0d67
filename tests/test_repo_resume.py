"""audit and mine under injected faults: a file whose calls always fail makes the run exit 3 and
name the file and line range in ask's ``coverage.chunks_failed`` shape; the run is recorded
(`rlm runs`, `rlm show`), and `rlm resume` finishes it with calls only for what failed.

Real subprocesses (`python -m rlm.cli`) against the real fake server (rlm/testing/fake_server.py)."""

from __future__ import annotations

import json

from tests import repo_responders as R
from tests.test_mine import _oracle
from tests.test_store import cli_env, rlm

from rlm.fixtures.repo import write_repo
from rlm.schemas.report import FailedChunk

FAILED_KEYS = set(FailedChunk.model_fields)  # ask's shape: chunk, path, lines, reason, status


def _serve_audit(server) -> None:
    server.on("ModuleResult", R.good_module)
    server.on("PickResult", R.good_pick)
    server.on("RiskPickResult", R.good_risk_pick)


def _failed_texts(server, since: int = 0) -> set[str]:
    return {r["user_text"] for r in server.requests[since:] if r["status"] != 200}


def _lines(path) -> int:
    return len(path.read_text().splitlines())


def test_audit_fault_exits_3_names_the_file_then_resume_finishes(fake_server, tmp_path):
    root = tmp_path / "repo"
    write_repo(root)
    _serve_audit(fake_server)
    env = cli_env()
    fake_server.fault("### parcelpost/net/client.py", "500")  # every call showing it fails
    args = ["audit", str(root), "--model", "fake", "--base-url", fake_server.url,
            "--concurrency", "4", "--json"]
    p = rlm(*args, env=env, timeout=120)
    assert p.returncode == 3, p.stderr
    rep = json.loads(p.stdout)
    cov = rep["coverage"]
    assert cov["complete"] is False and "INCOMPLETE" in cov["statement"]
    assert all(set(f) == FAILED_KEYS for f in cov["chunks_failed"])  # ask's shape
    n = _lines(root / "parcelpost/net/client.py")
    hit = [f for f in cov["chunks_failed"] if f["path"] == "parcelpost/net/client.py"]
    assert hit and all(1 <= f["line_start"] <= f["line_end"] <= n and "500" in f["reason"]
                       and f["status"] == "failed" for f in hit)
    assert "parcelpost/net/client.py" in rep["files"]["failed_files"]
    assert rep["reduce"] is None and rep["audit"]["stopped"] in ("no_progress", "nothing_left")
    failed_before = _failed_texts(fake_server)
    assert failed_before and all("### parcelpost/net/client.py" in t for t in failed_before)

    runs = {r["id"]: r for r in json.loads(rlm("runs", "--json", env=env).stdout)}
    rec = runs[rep["run_id"]]
    assert rec["status"] == "incomplete" and rec["argv"][0] == "audit"
    assert rec["chunks_failed"] == len({f["chunk"] for f in cov["chunks_failed"]})
    show = rlm("show", rep["run_id"], env=env)
    assert show.returncode == 0 and show.stdout.startswith("# rlm audit")
    assert "parcelpost/net/client.py" in show.stdout

    fake_server.clear_faults()
    n0 = len(fake_server.requests)
    p = rlm("resume", rep["run_id"][-6:], "--json", env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    rep2 = json.loads(p.stdout)
    assert rep2["coverage"]["complete"] is True and not rep2["coverage"]["chunks_failed"]
    assert rep2["files"]["failed"] == 0
    again = [r["user_text"] for r in fake_server.requests[n0:]]
    # the model was called only for calls that had failed: all else came from the call cache
    assert again and set(again) <= failed_before and len(again) == len(set(again))
    assert rep2["usage"]["cached_calls"] >= rep["coverage"]["chunks_ok"] - len(again)
    runs = {r["id"]: r for r in json.loads(rlm("runs", "--json", env=env).stdout)}
    assert runs[rep2["run_id"]]["resumed_from"] == rep["run_id"]
    assert runs[rep2["run_id"]]["status"] == "done"


def test_mine_fault_exits_3_names_the_file_then_resume_finishes(fake_server, tmp_path):
    root = tmp_path / "repo"
    key = write_repo(root)
    fake_server.on("PickResult", _oracle(key))
    env = cli_env()
    retry = next(f for f in key["facts"] if f["id"] == "retry_limit")
    ttl = next(f for f in key["facts"] if f["id"] == "session_ttl")
    fake_server.fault("== parcelpost/net/client.py ==", "500")
    args = ["mine", str(root), retry["question"], ttl["question"], "--model", "fake",
            "--base-url", fake_server.url, "--json"]
    p = rlm(*args, env=env, timeout=120)
    assert p.returncode == 3, p.stderr
    rep = json.loads(p.stdout)
    cov = rep["coverage"]
    assert cov["complete"] is False and all(set(f) == FAILED_KEYS for f in cov["chunks_failed"])
    hit = [f for f in cov["chunks_failed"] if f["path"] == retry["path"]]
    assert hit and hit[0]["line_start"] <= retry["line_start"] <= hit[0]["line_end"]
    q1, q2 = rep["questions"]
    assert q1["placeholder"] and q1["failed"] and ttl["quote"] in q2["verified"][0]["quote"]
    failed_before = _failed_texts(fake_server)
    assert failed_before and all(retry["question"] in t for t in failed_before)
    runs = {r["id"]: r for r in json.loads(rlm("runs", "--json", env=env).stdout)}
    assert runs[rep["run_id"]]["status"] == "incomplete"
    show = rlm("show", rep["run_id"], env=env)
    assert show.returncode == 0 and show.stdout.startswith("# Requirements")

    fake_server.clear_faults()
    n0 = len(fake_server.requests)
    p = rlm("resume", rep["run_id"], "--json", env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    rep2 = json.loads(p.stdout)
    again = [r["user_text"] for r in fake_server.requests[n0:]]
    assert again and set(again) == failed_before and len(again) == len(failed_before)
    assert rep2["coverage"]["complete"] is True
    assert rep2["usage"]["cached_calls"] == rep["coverage"]["chunks_ok"]
    q1 = rep2["questions"][0]
    assert not q1["placeholder"] and retry["quote"] in q1["verified"][0]["quote"]
