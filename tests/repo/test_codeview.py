"""`rlm audit` with no model: the whole-repository views (rlm.codeview) through the CLI, on a
small repository written here with a known import graph, packaging metadata and git history, and
on an installed real package (httpx, a dependency of rlm)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx

from rlm.testing import run_cli

FILES = {
    "pyproject.toml": """[project]
name = "shop"
dependencies = ["requests>=2", "pyyaml", "neverimported>=1"]
[project.optional-dependencies]
fast = ["orjson"]
[project.scripts]
shop = "shop.cli:main"
""",
    "shop/__init__.py": '__all__ = ["Basket", "checkout"]\nfrom shop.basket import Basket\n'
                        "from shop.pay import checkout\n",
    "shop/basket.py": "import requests\nimport yaml\n\n\nclass Basket:\n    pass\n",
    # pay -> tax at module level, tax -> pay inside a function: one cycle that runs
    "shop/pay.py": "from shop import tax\n\n\ndef checkout(b):\n    return tax.vat(b)\n",
    "shop/tax.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                   "    from shop.basket import Basket\n\n\ndef vat(b):\n"
                   "    from shop.pay import checkout\n    return checkout\n",
    "shop/secrets.py": 'import hashlib\nend_token = "!end"\n\n\ndef fp(x):\n'
                       "    return hashlib.md5(x, usedforsecurity=False).hexdigest()\n\n\n"
                       "def weak(x):\n    return hashlib.md5(x).hexdigest()\n",
    "shop/cli.py": "import sys\ntry:\n    import orjson\nexcept ImportError:\n"
                   "    orjson = None\nimport rich\n\n\ndef main():\n    return sys.argv\n\n\n"
                   'if __name__ == "__main__":\n    main()\n',
    "tests/test_pay.py": "from shop.pay import checkout\n\nPASSWORD = 'hunter22'\n\n\n"
                         "def test_checkout():\n    assert checkout\n",
}


def rlm(*args, env_extra=None, python_prefix=(), timeout=180):
    env = {k: v for k, v in os.environ.items() if k not in ("RLM_MODEL", "RLM_BASE_URL")}
    env.update(env_extra or {})
    if args[:2] == ("-m", "rlm.cli") and not python_prefix:
        return run_cli(*args[2:], env=env)  # in process; HIDE_TOOLS needs a fresh interpreter
    return subprocess.run([sys.executable, *python_prefix, *args], capture_output=True,
                          text=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL)


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root,
                   check=True, capture_output=True)


def write_shop(root: Path, commits: int = 3) -> None:
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, "utf-8")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "one")
    for i in range(commits - 1):  # pay.py changes in every later commit
        with (root / "shop/pay.py").open("a") as f:
            f.write(f"# change {i}\n")
        _git(root, "commit", "-qam", f"change {i}")


def test_views_of_a_known_repository_through_the_cli(tmp_path):
    root = tmp_path / "shop"
    write_shop(root)
    md_file = tmp_path / "audit.md"
    r = rlm("-m", "rlm.cli", "audit", str(root), "--json", "--out", str(md_file))
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    v = rep["views"]
    md = md_file.read_text("utf-8")
    assert "**1 import cycle(s)**" in md and "`shop.pay` ↔ `shop.tax`" in md
    assert "| `shop/pay.py` | 3 |" in md  # the hotspot row: three commits
    assert "Declared, no import found: `neverimported`." in md
    assert {t["name"]: t["status"] for t in v["tools"]} == {
        "ruff": "ran", "radon": "ran", "vulture": "ran", "git": "ran"}
    g = v["graph"]
    edges = {(e["source"], e["target"]): e["kind"] for e in g["edges"]}
    assert edges[("shop.pay", "shop.tax")] == "module"
    assert edges[("shop.tax", "shop.pay")] == "function"
    assert edges[("shop.tax", "shop.basket")] == "type_checking"
    assert edges[("test_pay", "shop.pay")] == "module"  # tests/ has no __init__.py
    assert g["cycles"] == [["shop.pay", "shop.tax"]]
    layer = {n["id"]: n["layer"] for n in g["nodes"]}
    assert layer["shop.basket"] == 0 and layer["shop"] > layer["shop.pay"] == layer["shop.tax"]
    assert g["most_imported"][0] in ("shop.pay", "shop.basket", "shop.tax")
    # entry points: the console script and the __main__ guard, at their lines
    eps = {(e["kind"], e["name"]): e for e in v["entry_points"]["items"]}
    assert eps[("console_script", "shop")]["target"] == "shop.cli:main"
    assert eps[("main_guard", "shop/cli.py")]["line"] == 13
    api = v["public_api"]["packages"][0]
    assert api["source"] == "__all__" and [(n["name"], n["defined_in"]) for n in api["names"]] == [
        ("Basket", "shop.basket"), ("checkout", "shop.pay")]
    # dependencies: declared and used, declared and never imported, imported and undeclared
    deps = {d["name"]: d for d in v["dependencies"]["declared"]}
    assert deps["requests"]["used_in"] == ["shop/basket.py"]
    assert deps["pyyaml"]["import_names"] == ["yaml"] and deps["pyyaml"]["used_in"]
    assert deps["orjson"]["group"] == "fast" and deps["orjson"]["used_in"] == ["shop/cli.py"]
    assert v["dependencies"]["unused"] == ["neverimported"]
    assert [(u["name"], u["optional"]) for u in v["dependencies"]["undeclared"]] == [("rich", False)]
    # the test map: the one test reaches pay and, through it, tax; basket only through tax's
    # TYPE_CHECKING import, which never runs
    reach = {m["module"]: m for m in v["test_map"]["modules"]}
    assert reach["shop.pay"]["direct"] == ["tests/test_pay.py"]
    assert reach["shop.tax"]["reached_by"] == 1 and not reach["shop.tax"]["direct"]
    assert "shop.basket" in v["test_map"]["unreached"]
    # hotspots: pay.py changed in all three commits
    hot = {h["path"]: h for h in v["hotspots"]["files"]}
    assert v["hotspots"]["commits"] == 3 and hot["shop/pay.py"]["commits"] == 3
    assert hot["shop/pay.py"]["score"] == 3 * hot["shop/pay.py"]["complexity"]
    # every section says what produced it and what it did not look at
    for name in ("analyzers", "complexity", "dead_code", "graph", "entry_points", "public_api",
                 "dependencies", "test_map", "hotspots"):
        assert v[name]["produced_by"] and v[name]["not_looked_at"], name


def test_severity_is_the_analyzers_not_a_word_match(tmp_path):
    root = tmp_path / "shop"
    write_shop(root, commits=1)
    rep = json.loads(rlm("-m", "rlm.cli", "audit", str(root), "--json").stdout)
    found = {(f["path"], f["line"]): f for f in rep["views"]["analyzers"]["findings"]}
    token = found[("shop/secrets.py", 2)]  # end_token = "!end": bandit B105 is LOW severity
    assert token["rule"] == "S105" and token["severity"] == "low"
    assert "B105" in token["basis"] and token["confidence"] == "medium"
    assert ("shop/secrets.py", 6) not in found  # md5(..., usedforsecurity=False)
    weak = found[("shop/secrets.py", 10)]
    assert weak["rule"] == "S324" and weak["severity"] == "high"
    # among the checked risks: the weak hash (high), not the token (low stays in the views)
    risks = {(f["source"]["path"], f["source"]["line_start"]): f for f in rep["findings"]
             if f["kind"] == "risk"}
    assert risks[("shop/secrets.py", 10)]["severity"] == "high"
    assert risks[("shop/secrets.py", 10)]["evidence"].strip().startswith("return hashlib.md5(x)")
    assert ("shop/secrets.py", 2) not in risks and ("shop/secrets.py", 6) not in risks
    # bandit's rules are not run on tests (a test's fixture password), and the section says so
    assert not [f for f in found.values() if f["path"].startswith("tests/")]
    assert any("test files" in x for x in rep["views"]["analyzers"]["not_looked_at"])


HIDE_TOOLS = ("-c", "import sys; sys.modules.update(ruff=None, radon=None, vulture=None); "
                    "sys.argv[0] = 'rlm'; from rlm.cli import main; main()")


def test_missing_tools_are_said_not_a_crash(tmp_path):
    """ruff, radon and vulture not importable and nothing on PATH (so no git either)."""
    root = tmp_path / "shop"
    write_shop(root, commits=1)
    r = rlm(*HIDE_TOOLS, "audit", str(root), "--json", env_extra={"PATH": ""})
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    v = rep["views"]
    assert {t["name"]: t["status"] for t in v["tools"]} == {
        "ruff": "missing", "radon": "missing", "vulture": "missing", "git": "missing"}
    assert v["analyzers"]["status"] == "missing" and "ruff is not installed" in v["analyzers"]["note"]
    assert v["complexity"]["status"] == "missing" and v["dead_code"]["status"] == "missing"
    assert v["graph"]["cycles"] == [["shop.pay", "shop.tax"]]  # code's own views still run
    assert any(d.startswith("ruff missing") for d in rep["coverage"]["declared"])
    # without ruff, rlm's own rule finds the weak hash, at bandit's level for the same check
    risks = [f for f in rep["findings"] if f["kind"] == "risk"]
    assert [(f["source"]["line_start"], f["severity"]) for f in risks
            if f["source"]["path"] == "shop/secrets.py"] == [(2, "low"), (10, "high")]
    md = rlm(*HIDE_TOOLS, "audit", str(root), env_extra={"PATH": ""}).stdout
    assert "### What the analyzers found" in md and "ruff is not installed" in md


def test_views_of_an_installed_package():
    pkg = Path(httpx.__file__).parent
    r = rlm("-m", "rlm.cli", "audit", str(pkg), "--json")
    assert r.returncode == 0, r.stderr
    v = json.loads(r.stdout)["views"]
    api = {p["package"]: p for p in v["public_api"]["packages"]}
    names = {n["name"]: n["defined_in"] for n in api["httpx"]["names"]}
    assert api["httpx"]["source"] == "__all__"
    assert names["Client"] == "httpx._client" and names["Response"] == "httpx._models"
    nodes = {n["id"]: n for n in v["graph"]["nodes"]}
    assert "httpx._models" in nodes and nodes["httpx._models"]["imported_by"] >= 5
    assert v["graph"]["most_imported"][0] in nodes
    # every edge is an import statement at its line in the importing file
    by_id = {n["id"]: n["path"] for n in v["graph"]["nodes"]}
    for e in v["graph"]["edges"]:
        line = (pkg / by_id[e["source"]]).read_text("utf-8").splitlines()[e["line"] - 1]
        assert "import" in line, (e, line)
    assert v["dependencies"]["status"] == "not_applicable"  # no packaging files inside


def test_every_bandit_rule_of_the_installed_ruff_has_bandits_level():
    """ruff's own rule list (`ruff rule --all`): each flake8-bandit rule rlm asks for is rated by
    recipes/analyzer-rules.toml, so no S finding falls back to "not rated"."""
    from rlm.codeview import severity
    from rlm.codeview.tools import ruff_binary

    listed = json.loads(subprocess.run([ruff_binary(), "rule", "--all", "--output-format", "json"],
                                       capture_output=True, text=True, check=True).stdout)
    codes = {r["code"] for r in listed if r["linter"] == "flake8-bandit"}
    _, ignored = severity.selected()
    assert len(codes) > 50
    unrated = sorted(c for c in codes - set(ignored) if "not rated" in severity.rate(c, "")[2]
                     or not severity.rate(c, "")[2].startswith("bandit B"))
    assert unrated == []
    assert severity.rate("S105", "")[:2] == ("low", "medium")  # B105: LOW, MEDIUM
    assert severity.rate("S113", "")[0] == "low"  # B113: MEDIUM with LOW confidence
    assert severity.rate("S602", "`subprocess` call with `shell=True` seems safe")[0] == "low"
