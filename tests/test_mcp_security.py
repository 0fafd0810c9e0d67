"""`rlm mcp` under attack, through the SDK's own client: a path swapped for a symlink while the
server opens it (a real renameat2 swapper process), a catastrophic regex, refusals that must not
name outside paths, and `show` of audit and mine runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from rlm.testing.mcp_client import connect, fake_model, structured, text_of

from rlm.corpus import beneath
from rlm.errors import UsageError
from rlm.mcp.roots import Roots

pytest.importorskip("mcp")
SWAPPER = Path(__file__).with_name("race_swapper.py")
OUTSIDE_LINE = "outside-secret-line"


def _race_tree(tmp_path: Path) -> tuple[Path, Path]:
    """root/d (a folder with a harmless `data.txt`) and root/x, a symlink to a folder outside
    whose `data.txt` is the secret: swapping d and x makes root/d/data.txt the secret."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "d").mkdir(parents=True)
    outside.mkdir()
    (root / "d" / "data.txt").write_text("harmless line\n" * 3)
    (outside / "data.txt").write_text(f"{OUTSIDE_LINE}\n" * 3)
    os.symlink(outside, root / "x")
    return root, outside


def _start_swapper(root: Path) -> subprocess.Popen:
    p = subprocess.Popen([sys.executable, str(SWAPPER), str(root / "d"), str(root / "x")],
                         stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready"
    return p


def _stop(p: subprocess.Popen, root: Path) -> None:
    p.kill()
    p.wait()
    if (root / "d").is_symlink():  # leave the tree as it was made
        from tests.race_swapper import swapper

        swapper(str(root / "d"), str(root / "x"))()


def test_the_swapper_really_races_a_check_then_open(tmp_path):
    """The attack works on what the server did before: check the name, then open it."""
    root, _ = _race_tree(tmp_path)
    roots = Roots([str(root)])
    p = _start_swapper(root)
    leaked = 0
    try:
        for _ in range(20000):
            try:
                real = roots.resolve("d/data.txt")
                with open(real) as fh:
                    leaked += OUTSIDE_LINE in fh.read()
            except (OSError, ValueError, UsageError):
                pass
            if leaked >= 3:
                break
    finally:
        _stop(p, root)
    if not leaked:
        pytest.skip("the swapper never won the race on this machine (too slow to show it)")
    assert leaked >= 1


def test_opening_beneath_the_root_never_escapes_a_racing_swapper(tmp_path):
    """The same check and open, but opened beneath the root: 0 escapes, and reads go on."""
    root, _ = _race_tree(tmp_path)
    roots = Roots([str(root)])
    p = _start_swapper(root)
    leaked = read = refused = 0
    try:
        with beneath.confined([str(root)]):
            for _ in range(6000):
                try:
                    real = roots.resolve("d/data.txt")
                    with beneath.open_file(real) as fh:
                        text = fh.read().decode()
                except (OSError, ValueError, UsageError):
                    refused += 1
                    continue
                leaked += OUTSIDE_LINE in text
                read += "harmless" in text
    finally:
        _stop(p, root)
    assert leaked == 0
    assert read > 0 and refused > 0  # both sides of the race were met


def test_mcp_read_lines_grep_and_ask_hold_against_a_racing_swapper(tmp_path):
    root, _ = _race_tree(tmp_path)

    async def main():
        texts, answered = [], 0
        async with connect([root]) as c:
            p = _start_swapper(root)
            try:
                for i in range(100):
                    r = await c.call_tool("read_lines", {"path": "d/data.txt", "start": 1, "end": 2})
                    texts.append(text_of(r))
                    answered += not r.is_error
                    r = await c.call_tool("grep", {"path": "d", "pattern": "line"})
                    texts.append(text_of(r))
                    if i % 20 == 0:
                        r = await c.call_tool("ask", {"path": "d/data.txt",
                                                      "question": "what does line 1 say?"})
                        texts.append(text_of(r) + str(r.structured_content))
            finally:
                _stop(p, root)
        return texts, answered

    texts, answered = anyio.run(main)
    assert not [t for t in texts if OUTSIDE_LINE in t]
    assert answered > 0  # the harmless file was read when no swap was in the way
    assert any("symlink" in t or "allowed roots" in t for t in texts)  # and swaps were met


def test_a_catastrophic_regex_answers_and_the_server_keeps_answering(tmp_path):
    (tmp_path / "a.txt").write_text("a" * 35 + "b\n" + "ERROR disk full\n")

    async def main():
        async with connect([tmp_path]) as c:
            with anyio.fail_after(60):
                bomb = await c.call_tool("grep", {"path": "a.txt", "pattern": "(a+)+$"})
                nested = await c.call_tool("grep", {"path": "a.txt", "pattern": "(x+x+)+y"})
                lookaround = await c.call_tool("grep", {"path": "a.txt", "pattern": r"(\w+)\1"})
                normal = await c.call_tool("grep", {"path": "a.txt", "pattern": "ERROR"})
        return bomb, nested, lookaround, normal

    bomb, nested, lookaround, normal = anyio.run(main)
    assert structured(bomb)["hits_total"] == 0 and structured(nested)["hits_total"] == 0
    assert lookaround.is_error and "backreferences are not supported" in text_of(lookaround)
    assert "\n" not in text_of(lookaround).strip()  # one line, no traceback
    assert structured(normal)["hits"][0]["line"] == 2


def test_refusals_name_only_the_roots(tmp_path):
    from rlm.api import AskOptions, ask

    root, outside = tmp_path / "root", tmp_path / "private-project-name"
    root.mkdir()
    outside.mkdir()
    (outside / "payroll-2026.log").write_text("ok\nERROR disk full on node-7\n")
    run_id = ask(str(outside / "payroll-2026.log"), "what about 'node-7'?",
                 AskOptions(model="none")).run_id

    async def main():
        async with connect([root]) as c:
            return [await c.call_tool("show", {"run_id": run_id}),
                    await c.call_tool("resume", {"run_id": run_id}),
                    await c.call_tool("show", {"run_id": "last"})]

    for r in anyio.run(main):
        t = text_of(r)
        assert r.is_error and str(root) in t
        assert "private-project-name" not in t and "payroll" not in t


def test_show_draws_audit_and_mine_runs(tmp_path, fake_server):
    from tests import repo_responders as R
    from tests.test_mine import _oracle

    from rlm.fixtures.repo import write_repo

    key = write_repo(tmp_path / "repo")
    fake_server.on("PickResult", _oracle(key))
    fake_server.on("ModuleResult", R.good_module)
    fake_server.on("RiskPickResult", R.good_risk_pick)

    async def main():
        async with connect([tmp_path], *fake_model(fake_server)) as c:
            mined = structured(await c.call_tool(
                "mine", {"repo": "repo", "questions": [key["facts"][0]["question"]]}))
            audited = structured(await c.call_tool("audit", {"repo": "repo",
                                                             "focus": "structure"}))
            shown = [await c.call_tool("show", {"run_id": r["run_id"]}) for r in (mined, audited)]
        return mined, audited, shown

    mined, audited, shown = anyio.run(main)
    for run, got in zip((mined, audited), shown):
        data = structured(got)
        assert data["run_id"] == run["run_id"] and data["command"] == run["command"]
        assert data["findings"] == run["findings"]
        assert f"Run {run['run_id']}" in text_of(got)


def test_the_walk_fallback_holds_too(tmp_path, monkeypatch):
    """Where openat2 is missing (old kernels, seccomp), one O_NOFOLLOW openat per component."""
    root, _ = _race_tree(tmp_path)
    monkeypatch.setattr(beneath, "_openat2_works", False)
    roots = Roots([str(root)])
    p = _start_swapper(root)
    leaked = read = refused = 0
    try:
        with beneath.confined([str(root)]):
            for _ in range(3000):
                try:
                    with beneath.open_file(roots.resolve("d/data.txt")) as fh:
                        text = fh.read().decode()
                except (OSError, ValueError, UsageError):
                    refused += 1
                    continue
                leaked += OUTSIDE_LINE in text
                read += "harmless" in text
    finally:
        _stop(p, root)
    assert leaked == 0 and read > 0 and refused > 0
    with beneath.confined([str(root)]):  # a symlink component is refused, a plain path read
        with pytest.raises(UsageError, match="symlink"):
            beneath.open_file(root / "x" / "data.txt")
        assert beneath.read_text(root / "d" / "data.txt").startswith("harmless")
        with pytest.raises(UsageError, match="outside the allowed roots"):
            beneath.open_file(tmp_path / "outside" / "data.txt")


def test_gz_and_folders_are_read_through_the_server(tmp_path):
    """A .gz is decompressed from a confined open into rlm's own spool file, which is then read
    as it is (it lies outside every root)."""
    import gzip

    (tmp_path / "logs").mkdir()
    with gzip.open(tmp_path / "logs" / "old.log.gz", "wt") as fh:
        fh.write("ok\nERROR disk full on node-7\n")

    async def main():
        async with connect([tmp_path]) as c:
            return (await c.call_tool("read_lines", {"path": "logs/old.log.gz", "start": 1,
                                                     "end": 2}),
                    await c.call_tool("ask", {"path": "logs", "question": "what about 'node-7'?"}))

    lines, asked = anyio.run(main)
    assert structured(lines)["lines"][1]["text"] == "ERROR disk full on node-7"
    assert "node-7" in text_of(asked) and not asked.is_error
