"""Code-only repository facts (rlm.repo.facts): entry points, dependencies, tests -> functions,
markers, risky calls, largest functions; each with the file's own text as evidence."""

from __future__ import annotations

import textwrap
import time

from rlm.repo.facts import repo_facts
from rlm.testing import run_cli


def write(root, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))


def test_facts_of_a_small_package(tmp_path):
    write(tmp_path, {
        "pyproject.toml": """
            [project]
            name = "shop"
            dependencies = ["httpx>=0.27", "pyyaml"]
            [project.scripts]
            shop = "shop.cli:main"
            """,
        "shop/__main__.py": "from shop.cli import main\nmain()\n",
        "shop/cli.py": """
            import click, subprocess, yaml, requests

            @click.command()
            def main():
                # TODO: read the config path from the environment
                cfg = yaml.load(open("c.yml"))
                subprocess.run("ls " + cfg["dir"], shell=True)
                requests.get("https://x", verify=False)
                return eval(cfg["expr"])

            API_KEY = "sk-live-1234567890"
            """,
        "shop/web.py": """
            from fastapi import FastAPI
            app = FastAPI()

            @app.get("/orders/{oid}")
            def get_order(oid: int):
                return total(oid)

            def total(oid):
                return oid * 2
            """,
        "shop/broken.py": "def (:\n",
        "tests/test_web.py": """
            from shop.web import get_order, total

            def test_total_doubles():
                assert total(2) == 4

            def test_get_order_uses_total():
                assert get_order(3) == 6
            """,
    })
    r = repo_facts(tmp_path)

    def at(rel: str, needle: str) -> str:  # where the text really is, counted independently
        lines = (tmp_path / rel).read_text().splitlines()
        return f"{rel}:{next(i for i, ln in enumerate(lines, 1) if needle in ln)}"

    claims = {f.kind: [] for f in r.facts}
    for f in r.facts:
        claims[f.kind].append((f.claim, f"{f.path}:{f.line_start}"))
    ep = dict(claims["entry_point"])
    assert ep["console script `shop` runs shop.cli:main"] == at("pyproject.toml", "shop = ")
    assert ep["`python -m shop` runs this module"] == "shop/__main__.py:1"
    assert ep["CLI command `main` (click.command)"] == at("shop/cli.py", "def main")
    assert ep["HTTP GET /orders/{oid} -> get_order"] == at("shop/web.py", "def get_order")
    deps = [c for c, _ in claims["dependency"]]
    assert deps == ["depends on httpx>=0.27", "depends on pyyaml"]
    risks = dict(claims["risk"])
    assert risks["yaml.load() without a safe Loader"] == at("shop/cli.py", "yaml.load")
    assert risks["subprocess.run(shell=True) runs a shell command line"] == at("shop/cli.py", "shell=True")
    assert risks["requests.get(verify=False) disables TLS certificate checks"] == at("shop/cli.py", "verify=False")
    assert risks["eval() runs code built at run time"] == at("shop/cli.py", "eval(")
    assert risks["hard-coded credential in `API_KEY`"] == at("shop/cli.py", "API_KEY")
    assert claims["marker"] == [("TODO: read the config path from the environment", at("shop/cli.py", "TODO"))]
    tests = dict(claims["test"])
    assert tests["test_get_order_uses_total exercises get_order"] == at("tests/test_web.py", "def test_get_order")
    assert tests["test_total_doubles exercises total"] == at("tests/test_web.py", "def test_total")
    assert r.unparsed and r.unparsed[0].startswith("shop/broken.py: SyntaxError")
    # evidence is the file's own text at the fact's line
    ev = next(f for f in r.facts if f.claim.startswith("eval()"))
    assert ev.evidence.strip() == 'return eval(cfg["expr"])'
    big = r.of("large_function")[0]
    assert big.claim.startswith("main is 6 lines") and big.path == "shop/cli.py"


def test_facts_of_the_repo_fixture_in_well_under_a_minute(tmp_path):
    assert run_cli("fixture", "repo", str(tmp_path / "repo")).returncode == 0
    t = time.monotonic()
    r = repo_facts(tmp_path / "repo")
    assert time.monotonic() - t < 10
    claims = [f.claim for f in r.facts]
    assert "HTTP GET /orders -> do_GET" in claims and "HTTP POST /orders -> do_POST" in claims
    assert any(c.startswith("hashlib.sha1() is a weak hash") for c in claims)
    assert any(c.startswith("test_roundtrip exercises hash_password, check_password") for c in claims)
    assert not any(f.path.startswith(("vendor/", "node_modules/", "build/")) for f in r.facts)


def test_line_numbers_survive_form_feeds_like_the_evidence_checker_reads_them(tmp_path):
    """A form feed (^L page break) or U+2028 is not a line break for Python, git or the
    evidence checker: each fact's line and evidence are the file's own, after them too."""
    from rlm.verify import evidence

    write(tmp_path, {"pkg/__init__.py": "", "pkg/old.py": (
        "import subprocess\n\x0c\n# section two \u2028 still one line\n\n"
        "def run(cmd):\n    # FIXME: quote the command\n"
        "    return subprocess.run(cmd, shell=True)\n")})
    facts = [f for f in repo_facts(tmp_path).facts if f.path == "pkg/old.py"]
    kinds = {f.kind: f for f in facts}
    assert kinds["marker"].line_start == 6 and kinds["risk"].line_start == 7
    for f in facts:
        first = f.evidence.split("\n")[0]
        ev = evidence.check(tmp_path, f"{f.path}:{f.line_start}-{f.line_start}", first.strip())
        assert ev.status == "verified", (f.kind, f.line_start, ev.reason)


def test_a_function_with_one_branch_says_branch(tmp_path):
    """The large-function fact counts branches in words a reader reads: "1 branch", "2
    branches" (it said "1 branches")."""
    write(tmp_path, {"m.py": """
        def one(x):
            if x:
                return 1
            return 2

        def two(xs):
            for x in xs:
                if x:
                    return x
            return None
        """})
    claims = {f.claim for f in repo_facts(tmp_path).facts if f.kind == "large_function"}
    assert claims == {"one is 4 lines with 1 branch", "two is 5 lines with 2 branches"}
