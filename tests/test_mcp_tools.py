"""`rlm mcp`: audit/mine through the server, client-declared roots, and the code-only parts
(roots checks, bounded grep/read_lines) called directly."""

from __future__ import annotations

import os

import anyio
import pytest
from tests import repo_responders as R
from rlm.testing.mcp_client import connect, fake_model, structured, text_of
from tests.test_mine import _ep, _oracle

from rlm.errors import UsageError
from rlm.fixtures.repo import write_repo
from rlm.mcp import bounded
from rlm.mcp.roots import PathRefused, Roots

pytest.importorskip("mcp")


def test_mine_and_audit_through_the_server(tmp_path, fake_server):
    root = tmp_path / "repo"
    key = write_repo(root)
    fake_server.on("PickResult", _oracle(key))
    fake_server.on("ModuleResult", R.good_module)
    fake_server.on("RiskPickResult", R.good_risk_pick)
    fact = key["facts"][0]
    unanswerable = key["unanswerable_questions"][0]

    async def main():
        async with connect([tmp_path], *fake_model(fake_server)) as c:
            mined = await c.call_tool("mine", {"repo": "repo",
                                               "questions": [fact["question"], unanswerable]})
            audited = await c.call_tool("audit", {"repo": "repo", "focus": "structure"})
            not_a_folder = await c.call_tool("audit", {"repo": f"repo/{fact['path']}"})
            return mined, audited, not_a_folder

    mined, audited, not_a_folder = anyio.run(main)
    m = structured(mined)
    by_q = {q["question"]: q for q in m["questions"]}
    hits = [f for f in by_q[fact["question"]]["verified"]
            if _ep(f["evidence_path"])[0] == fact["path"] and fact["quote"] in f["quote"]]
    assert hits
    assert by_q[unanswerable]["placeholder"] == f"[fact: {unanswerable}]"
    assert m["coverage"]["statement"] and m["run_id"]
    a = structured(audited)
    assert a["audit"]["lenses"] == ["structure"] and a["audit"]["modules"]
    for f in a["findings"]:
        if f["verified"]:
            s = f["source"]
            R.assert_evidence(root, s["path"], s["line_start"], s["line_end"], f["evidence"].split("\n")[0])
    assert not_a_folder.is_error and "not a folder" in text_of(not_a_folder)


def test_client_declared_roots_widen_what_may_be_read(tmp_path):
    from mcp_types import ListRootsResult, Root

    server_root, client_root = tmp_path / "server", tmp_path / "client"
    server_root.mkdir()
    client_root.mkdir()
    (client_root / "c.log").write_text("alpha\nERROR beta\n")

    async def roots_cb(context):
        return ListRootsResult(roots=[Root(uri=client_root.as_uri(), name="client")])

    async def main():
        async with connect([server_root], mode="legacy", list_roots_callback=roots_cb) as c:
            with_roots = await c.call_tool("grep", {"path": str(client_root / "c.log"),
                                                    "pattern": "ERROR"})
        async with connect([server_root], mode="legacy") as c:  # no roots declared
            without = await c.call_tool("grep", {"path": str(client_root / "c.log"),
                                                 "pattern": "ERROR"})
        return with_roots, without

    with_roots, without = anyio.run(main)
    assert structured(with_roots)["hits"][0]["line"] == 2
    assert without.is_error and "outside the allowed roots" in text_of(without)


# ------------------------------------------------------------------------------ code only


def test_roots_resolve_and_refuse(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    (root / "sub" / "a.txt").write_text("x\n")
    (outside / "b.txt").write_text("y\n")
    os.symlink(outside / "b.txt", root / "escape.txt")
    os.symlink(root / "sub" / "a.txt", root / "inner.txt")
    roots = Roots([str(root)])
    assert roots.resolve("sub/a.txt") == (root / "sub" / "a.txt").resolve()
    assert roots.resolve(str(root / "inner.txt")) == (root / "sub" / "a.txt").resolve()
    with pytest.raises(PathRefused, match="outside the allowed roots"):
        roots.resolve("sub/../../outside/b.txt")
    with pytest.raises(PathRefused, match="symlink"):
        roots.resolve("escape.txt")
    with pytest.raises(UsageError, match="no such file"):
        roots.resolve("sub/missing.txt")
    notes = roots.set_client_roots([outside.as_uri(), "https://example.com/x"])
    assert roots.resolve(str(outside / "b.txt")) == (outside / "b.txt").resolve()
    assert notes and "only local file:// roots" in notes[0]
    with pytest.raises(UsageError, match="not a folder"):
        Roots([str(root / "sub" / "a.txt")])


def test_grep_declares_its_cut(tmp_path):
    p = tmp_path / "big.txt"
    p.write_text("".join(f"row {i} {'hit' if i % 10 == 0 else 'miss'}\n" for i in range(1, 5001))
                 + "hit " + "z" * 900 + "\n")
    res = bounded.grep(p, "big.txt", r"\bhit\b", max_hits=20)
    assert res.hits_total == 501 and len(res.hits) == 20 and res.truncated
    assert [h.line for h in res.hits[:2]] == [10, 20]
    assert "only the first 20 are shown" in res.statement
    last = bounded.grep(p, "big.txt", r"^hit z", max_hits=5)
    assert last.hits[0].line == 5001 and last.hits[0].cut and len(last.hits[0].text) == 500
    with pytest.raises(UsageError, match="invalid regular expression"):
        bounded.grep(p, "big.txt", "(unclosed", None)


def test_read_lines_is_bounded(tmp_path):
    p = tmp_path / "f.txt"
    p.write_text("".join(f"line {i}\n" for i in range(1, 1001)))
    res = bounded.read_lines(p, "f.txt", 10, 900)
    assert res.start == 10 and res.end == 409 and len(res.lines) == 400
    assert res.lines[0].text == "line 10" and "call again from 410" in res.statement
    tail = bounded.read_lines(p, "f.txt", 995, 2000)
    assert [x.line for x in tail.lines] == list(range(995, 1001))
    assert "the file ends at line 1,000" in tail.statement
    with pytest.raises(UsageError, match="does not exist"):
        bounded.read_lines(p, "f.txt", 1001, 1002)
    with pytest.raises(UsageError, match="bad line range"):
        bounded.read_lines(p, "f.txt", 5, 4)


def test_runs_about_paths_outside_the_roots_are_hidden(tmp_path):
    from rlm.api import AskOptions, ask

    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    for d in (root, outside):
        (d / "x.log").write_text("ok\nERROR disk full on node-7\n")
    inside_run = ask(str(root / "x.log"), "what about 'node-7'?", AskOptions(model="none")).run_id
    outside_run = ask(str(outside / "x.log"), "what about 'node-7'?",
                      AskOptions(model="none")).run_id

    async def main():
        async with connect([root]) as c:
            listed = await c.call_tool("runs", {})
            shown = await c.call_tool("show", {"run_id": inside_run})
            refused = await c.call_tool("show", {"run_id": outside_run})
            not_resumed = await c.call_tool("resume", {"run_id": outside_run})
            return listed, shown, refused, not_resumed

    listed, shown, refused, not_resumed = anyio.run(main)
    runs = structured(listed)
    assert [r["id"] for r in runs["runs"]] == [inside_run] and runs["hidden"] == 1
    assert structured(shown)["run_id"] == inside_run
    for r in (refused, not_resumed):
        assert r.is_error and "outside the allowed roots" in text_of(r)
        assert "disk full" not in text_of(r)


def test_sampling_outside_the_mcp_server_is_a_clear_usage_error():
    from rlm.models.registry import resolve_model

    with pytest.raises(UsageError, match="only inside `rlm mcp --model sampling`"):
        resolve_model("sampling")


def test_a_cancelled_audit_stops_making_calls(tmp_path, fake_server):
    import threading

    write_repo(tmp_path / "repo")
    release = threading.Event()

    def hang(req, text):
        release.wait(30)
        return R.good_module(req, text)

    fake_server.on("ModuleResult", hang)

    async def main():
        async with connect([tmp_path], *fake_model(fake_server), "--concurrency", "2") as c:
            async with anyio.create_task_group() as tg:
                tg.start_soon(c.call_tool, "audit", {"repo": "repo"})
                with anyio.fail_after(30):
                    while not fake_server.requests:
                        await anyio.sleep(0.05)
                await anyio.sleep(0.3)
                tg.cancel_scope.cancel()  # the client gives up on the audit
            at_cancel = len(fake_server.requests)
            await anyio.sleep(1.0)
            release.set()  # were the run still going, its next calls would now be made
            await anyio.sleep(1.5)
            alive = await c.call_tool("grep", {"path": "repo", "pattern": "DEFAULT_", "max_hits": 1})
            return at_cancel, alive

    at_cancel, alive = anyio.run(main)
    assert 1 <= at_cancel <= 2
    assert len(fake_server.requests) == at_cancel
    assert structured(alive)["hits_total"] >= 1  # the server still answers
