"""Test -> definition links resolved through imports and types (rlm.repo.links), checked against
the collision fixture's answer key (fixtures/links/key.toml) and on an installed real package."""

from __future__ import annotations

import ast
import json
import subprocess
import textwrap
from pathlib import Path

import pytest
from rlm.fixtures.links import answer_key, write_links_repo

from rlm.repo.files import is_test_file
from rlm.repo.links import resolve_test_links
from rlm.testing import run_cli

CANONICAL = "what already works and must not be touched?"


def rlm(*args: str) -> subprocess.CompletedProcess:
    return run_cli(*args)


def parse_tree(root: Path) -> dict[str, ast.Module]:
    return {p.relative_to(root).as_posix(): ast.parse(p.read_text("utf-8"))
            for p in sorted(root.rglob("*.py"))}


def key_links(key: dict, resolvable: bool = True) -> set[tuple[str, str]]:
    return {(e["test"], t) for e in key["links"] if e.get("resolvable", True) == resolvable
            for t in e["targets"]}


def stated(tests, status: str) -> set[tuple[str, str]]:
    return {(t.name, f"{x.target.path}:{x.target.qualname}") for t in tests
            for x in t.links if x.status == status and x.target}


def test_fixture_links_match_the_answer_key_exactly(tmp_path):
    write_links_repo(tmp_path / "shelf")
    tests = resolve_test_links(parse_tree(tmp_path / "shelf"), is_test_file)
    key = answer_key()
    verified = stated(tests, "verified")
    assert verified - key_links(key) == set()  # no false link
    assert key_links(key) - verified == set()  # every resolvable true link stated
    # the true link code cannot show (a fixture's object) is never verified; it is inferred
    hidden = key_links(key, resolvable=False)
    assert hidden and not hidden & verified
    by_name = {t.name: t for t in tests}
    inferred = by_name["test_parametrized_reader"].of("inferred")
    assert [x.call for x in inferred] == ["source.read"]
    assert "`source` is a parametrized argument" in inferred[0].reason
    assert "shelf/net.py:9" in [c.where for c in inferred[0].candidates]
    # the fixture made in conftest.py is followed to what it returns
    fixture = by_name["test_fixture_store"].of("verified")
    assert [(x.call, x.target.qualname) for x in fixture] == [("store.get", "MemoryStore.get")]


def test_builtin_methods_and_test_helpers_are_rejected_not_linked(tmp_path):
    write_links_repo(tmp_path / "shelf")
    tests = {t.name: t for t in resolve_test_links(parse_tree(tmp_path / "shelf"), is_test_file)}
    for entry in answer_key()["not_links"]:
        t = tests[entry["test"]]
        assert not t.of("verified"), entry["why"]
        rejected = {x.call.replace('"', "'") for x in t.of("rejected")}
        assert {c.replace('"', "'") for c in entry["calls"]} <= rejected, entry["why"]
    reasons = " ".join(x.reason for x in tests["test_builtins_only"].of("rejected"))
    for builtin in ("`str.split`", "`str.join`", "`bytes.join`", "`dict.get`", "`file.read`"):
        assert builtin in reasons


def test_resolution_follows_relative_imports_reexports_and_return_annotations(tmp_path):
    files = {
        "pkg/__init__.py": "from ._models import Response as Response\n",
        "pkg/_models.py": """
            class Request:
                def read(self): ...

            class Response:
                def read(self): ...
            """,
        "pkg/_client.py": """
            from ._models import Response

            class Client:
                def __enter__(self):
                    return self

                def get(self, url) -> "Response":
                    return Response()
            """,
        "pkg/api.py": "def get(url):\n    return None\n",
        "tests/test_client.py": """
            import pkg
            from pkg._client import Client

            def test_read():
                with Client() as client:
                    r = client.get("/")
                    r.read()

            def test_unknown(client):
                client.get("/")
            """,
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(textwrap.dedent(text))
    tests = {t.name: t for t in resolve_test_links(parse_tree(tmp_path), is_test_file)}
    got = {x.target.qualname for x in tests["test_read"].of("verified")}
    assert got == {"Client", "Client.get", "Response.read"}  # not Request.read, not api.get
    unknown = tests["test_unknown"]
    assert not unknown.of("verified") and unknown.of("inferred")[0].call == "client.get"


def def_line(root: Path, target: str) -> int:
    """The line of `path:Class.method` found by walking the file's own tree."""
    path, qual = target.split(":")
    body = ast.parse((root / path).read_text()).body
    for part in qual.split("."):
        node = next(n for n in body if getattr(n, "name", None) == part)
        body = getattr(node, "body", [])
    return node.lineno


def test_mine_and_audit_on_the_fixture_through_the_cli(tmp_path):
    root = tmp_path / "shelf"
    r = rlm("fixture", "links", str(root))
    assert r.returncode == 0, r.stderr
    key = json.loads(Path(str(root) + ".truth.json").read_text())
    r = rlm("mine", str(root), CANONICAL, "--model", "none", "--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["links"] == {"verified": 23, "inferred": 2, "rejected": 6}
    q = rep["questions"][0]
    pinned = {(f["test"].rsplit("::", 1)[1], f["definition"]) for f in q["verified"] if f["test"]}
    expected = {(e["test"], f"{t.split(':')[0]}:{def_line(root, t)}") for e in key["links"]
                if e.get("resolvable", True) for t in e["targets"]}
    assert pinned == expected
    assert all(f["confidence"] == "inferred" for f in q["inferred"])
    md = rlm("mine", str(root), CANONICAL, "--model", "none")
    assert "### `shelf/stores.py`" in md.stdout
    assert "`FileReader.read` (" in md.stdout and "pinned by 2 test(s)" in md.stdout
    assert "Test links: 23 verified, 2 inferred, 6 rejected" in md.stdout
    audit = json.loads(rlm("audit", str(root), "--model", "none", "--json").stdout)
    assert audit["audit"]["links"] == rep["links"]
    unverified = [f for f in audit["findings"] if f["label"] == "test_inferred"]
    assert len(unverified) == 2 and not any(f["verified"] for f in unverified)


def _installed(name: str) -> Path:
    spec = __import__("importlib.util").util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        pytest.skip(f"{name} is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def test_installed_package_links_point_at_real_definitions(tmp_path):
    """`referencing` (installed with jsonschema, a dependency of mcp) ships its tests: every
    verified link names a definition that Python itself finds at that file and line."""
    root = _installed("referencing")
    r = rlm("mine", str(root), CANONICAL, "--model", "none", "--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    pinned = [f for f in rep["questions"][0]["verified"] if f["test"]]
    assert rep["links"]["verified"] >= len(pinned) > 50
    import importlib
    import inspect
    for f in pinned:
        path, line = f["definition"].rsplit(":", 1)
        qual = f["claim"].split("`")[1]
        mod = importlib.import_module("referencing." + path[:-3].replace("/", ".")
                                      .removesuffix(".__init__"))
        obj = mod
        for part in qual.split("."):
            obj = getattr(obj, part)
        obj = inspect.unwrap(getattr(obj, "fget", obj))
        src, start = inspect.getsourcelines(obj)
        first_def = next(i for i, ln in enumerate(src) if ln.lstrip().startswith(("def ", "class ",
                                                                                    "async def ")))
        assert start + first_def == int(line), f["claim"]


def test_a_models_link_claim_is_checked_like_codes(fake_server, tmp_path):
    """With a model, a claim that a test exercises a definition stays verified only when code
    resolved that call: the same line, named with the wrong class, becomes inferred."""
    from rlm.repo.mine import MineOptions, mine

    root = tmp_path / "shelf"
    write_links_repo(root)

    def respond(req, text):
        rows = [(int(n), p, t) for n, p, t in _candidate_rows(text)]
        pick = {}
        for n, p, t in rows:
            if ".read()" in t and p.startswith("tests/"):
                pick.setdefault(p, (n, t.strip().split("assert ")[-1].split(" ==")[0]))
        return {"picks": [{"n": n, "claim": f"`{call}` reads its source with `FileReader.read`"}
                          for n, call in pick.values()]}

    fake_server.on("PickResult", respond)
    rep = mine(str(root), ["What does read() return?"],
               MineOptions(model="fake", base_url=fake_server.url))
    q = rep.questions[0]
    assert {f.evidence_path.split(":")[0] for f in q.verified} == {"tests/test_files.py"}
    wrong = [f for f in q.inferred if f.evidence_path.startswith("tests/test_net.py")]
    assert wrong and "the claim names `FileReader.read`" in wrong[0].note, q
    assert "`SocketReader.read`" in wrong[0].note  # what code resolved instead


def _candidate_rows(text: str):
    path = ""
    for line in text.split("\n"):
        if line.startswith("== ") and line.endswith(" =="):
            path = line[3:-3]
        elif line.startswith("[") and "]" in line:
            n, _, rest = line[1:].partition("]")
            if n.isdigit():
                yield n, path, rest


def test_star_imports_link_only_when_one_source_exports_the_name(tmp_path):
    files = {
        "pkg/__init__.py": "",
        "pkg/a.py": "__all__ = ['fetch']\n\ndef fetch(): ...\n\ndef get(): ...\n",
        "pkg/b.py": "def get(): ...\n\ndef put(): ...\n",
        "pkg/c.py": "def put(): ...\n",
        "tests/test_star.py": textwrap.dedent("""
            from pkg.a import *
            from pkg.b import *

            def test_get():
                get()

            def test_fetch():
                fetch()

            """),
        "tests/test_star_outside.py": textwrap.dedent("""
            from pkg.c import *
            from os.path import *

            def test_put():
                put()
            """),
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    tests = {t.name: t for t in resolve_test_links(parse_tree(tmp_path), is_test_file)}
    # pkg.a's __all__ leaves `get` out: only pkg.b exports it
    assert [x.target.where for x in tests["test_get"].of("verified")] == ["pkg/b.py:1"]
    assert [x.target.where for x in tests["test_fetch"].of("verified")] == ["pkg/a.py:3"]
    # a star import from outside the repository could bind `put` too: inferred, not guessed
    assert not tests["test_put"].of("verified") and tests["test_put"].of("inferred")
