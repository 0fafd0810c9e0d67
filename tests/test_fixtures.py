"""The fixture generators: deterministic output, and answer keys that match the files."""

from __future__ import annotations

import json
import re

import pytest

try:
    from rlm.fixtures import log as flog, repo as frepo, transcript as ftx
except ImportError:  # running from a plain checkout without the package installed
    from fixtures import log as flog, repo as frepo, transcript as ftx


def _lines(path) -> list[str]:
    data = path.read_bytes()
    assert data.endswith(b"\n")
    return data.decode("utf-8").split("\n")[:-1]


# --- log -------------------------------------------------------------------------------

def test_log_is_deterministic(tmp_path):
    a, b, c = tmp_path / "a.log", tmp_path / "b.log", tmp_path / "c.log"
    ka = flog.write_log(a, lines=3000, seed=7)
    kb = flog.write_log(b, lines=3000, seed=7)
    kc = flog.write_log(c, lines=3000, seed=8)
    assert a.read_bytes() == b.read_bytes()
    assert ka == kb
    assert a.read_bytes() != c.read_bytes()
    # needle positions depend only on the line count, not on the seed
    assert [n["line"] for n in ka["needles"]] == [n["line"] for n in kc["needles"]]
    assert ka["session_id"] != kc["session_id"] or ka["txn_ids"] != kc["txn_ids"]


@pytest.mark.parametrize("n", [12, 13, 20, 50, 180, 5000])
def test_log_key_matches_file(tmp_path, n):
    path = tmp_path / "x.log"
    key = flog.write_log(path, lines=n, seed=3)
    lines = _lines(path)
    assert len(lines) == n == key["lines"]
    assert key["bytes"] == path.stat().st_size
    assert json.loads((tmp_path / "x.log.truth.json").read_text()) == key
    needles = key["needles"]
    assert len(needles) == 12
    nums = [x["line"] for x in needles]
    assert nums == sorted(nums) and len(set(nums)) == 12
    assert all(1 <= x <= n for x in nums)
    for x in needles:
        assert lines[x["line"] - 1] == x["text"]
    kinds = [x["kind"] for x in needles]
    assert kinds.count("panic") == 4
    assert kinds.count("config_override") == 3
    session = [x for x in needles if x["kind"] == "session"]
    assert [x["step"] for x in session] == [1, 2, 3, 4, 5]  # in file order
    assert all(key["session_id"] in x["text"] and x["id"] == key["session_id"] for x in session)
    panics = [x for x in needles if x["kind"] == "panic"]
    assert sorted(x["id"] for x in panics) == sorted(key["txn_ids"])
    assert len(set(key["txn_ids"])) == 4
    assert all(re.fullmatch(r"TXN-\d{5}", t) for t in key["txn_ids"])
    assert all(f"txn={x['id']} " in x["text"] and " ERROR " in x["text"] for x in panics)
    assert all(key["flag"] in x["text"] for x in needles if x["kind"] == "config_override")


def test_log_noise_shape(tmp_path):
    path = tmp_path / "n.log"
    key = flog.write_log(path, lines=20_000, seed=7)
    lines = _lines(path)
    needle_lines = {x["line"] for x in key["needles"]}
    ts = [ln[:24] for ln in lines]
    assert ts == sorted(ts) and len(set(ts)) == len(ts)  # strictly increasing
    mask = re.compile(r"[A-Za-z0-9_.:+-]*[0-9][A-Za-z0-9_.:+-]*|\b[0-9a-fA-F]{8,}\b")
    noise = re.compile(r"\S{24} (INFO |DEBUG|WARN ) \[(gateway|checkout|catalog|billing|search)\] "
                       r"req=[0-9a-f]{8} (GET|POST) /\S+ status=200 \d+ms")
    templates: dict[str, int] = {}
    for i, ln in enumerate(lines, 1):
        if i in needle_lines:
            assert not noise.fullmatch(ln)
            continue
        assert noise.fullmatch(ln), ln
        t = mask.sub("#", ln)
        templates[t] = templates.get(t, 0) + 1
    assert len(templates) <= 30
    assert min(templates.values()) > 100
    sizes = [len(ln) + 1 for ln in lines]
    assert 70 <= sum(sizes) / len(sizes) <= 95


@pytest.mark.parametrize("n", [0, 5, 11])
def test_log_too_small(tmp_path, n):
    with pytest.raises(ValueError):
        flog.write_log(tmp_path / "s.log", lines=n)


# --- transcript ------------------------------------------------------------------------

def _planted(key) -> list[dict]:
    out = [dict(x, group="story") for x in key["story"]]
    for r in key["revisions"]:
        out += [dict(v, group="revision") for v in r["values"]]
    out += [dict(x, group="distractor") for x in key["distractors"]]
    return out


def test_transcript_is_deterministic(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    ka = ftx.write_transcript(a, lines=2000, seed=7)
    kb = ftx.write_transcript(b, lines=2000, seed=7)
    assert a.read_bytes() == b.read_bytes() and ka == kb
    ftx.write_transcript(tmp_path / "c.txt", lines=2000, seed=9)
    assert (tmp_path / "c.txt").read_bytes() != a.read_bytes()


@pytest.mark.parametrize("n", [60, 61, 200, 3000])
def test_transcript_key_matches_file(tmp_path, n):
    path = tmp_path / "t.txt"
    key = ftx.write_transcript(path, lines=n, seed=7)
    lines = _lines(path)
    assert len(lines) == n == key["lines"]
    assert key["bytes"] == path.stat().st_size
    assert json.loads((tmp_path / "t.txt.truth.json").read_text()) == key
    planted = _planted(key)
    nums = [x["line"] for x in planted]
    assert len(set(nums)) == len(nums) == 5 + 9 + 7
    for x in planted:
        assert lines[x["line"] - 1] == x["text"]
        assert re.match(r"\[\d\d:\d\d:\d\d\] [A-Z][a-z]+: ", x["text"])
    story = key["story"]
    assert [s["step"] for s in story] == [1, 2, 3, 4, 5]
    assert [s["line"] for s in story] == sorted(s["line"] for s in story)
    for r in key["revisions"]:
        vals = r["values"]
        assert len(vals) == 3 and len({v["value"] for v in vals}) == 3
        assert [v["line"] for v in vals] == sorted(v["line"] for v in vals)
        assert r["final"] == vals[-1]["value"]
        assert all(v["value"] in v["text"] for v in vals)
    assert key["questions"]["story"] and key["questions"]["revised"]
    assert lines[0].startswith("=== Meeting 1:")


def test_transcript_story_has_no_shared_anchor():
    """No distinctive word links two story pieces: each shared word is common in the noise."""
    vocab = set()
    for pool in (ftx.SUBJECTS, ftx.PREDICATES, ftx.TAILS, ftx.SHORT, ftx.NUMBERED, ftx.SPEAKERS):
        for s in pool:
            vocab |= set(re.findall(r"[a-z0-9']+", s.lower()))
    stop = {"the", "a", "an", "and", "or", "of", "to", "in", "on", "at", "for", "from", "with",
            "that", "this", "those", "there", "then", "it", "its", "we", "we'd", "i", "i'd", "be",
            "but", "by", "is", "are", "has", "have", "been", "would", "only", "all", "every",
            "more", "over", "up", "out", "back", "who", "our", "us", "instead"}
    words = [set(re.findall(r"[a-z0-9']+", text.lower())) for _, _, _, _, text in ftx.STORY]
    for i in range(len(words)):
        for j in range(i + 1, len(words)):
            shared = (words[i] & words[j]) - stop - vocab
            assert not shared, (i + 1, j + 1, shared)


def test_transcript_too_small(tmp_path):
    with pytest.raises(ValueError):
        ftx.write_transcript(tmp_path / "t.txt", lines=59)


# --- repo ------------------------------------------------------------------------------

def test_repo_is_deterministic(tmp_path):
    ka = frepo.write_repo(tmp_path / "a", seed=7)
    kb = frepo.write_repo(tmp_path / "b", seed=7)
    assert ka == kb
    for rel in ka["files"]["all"]:
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes()
    assert (tmp_path / "a.truth.json").exists() and not (tmp_path / "a" / "a.truth.json").exists()


@pytest.mark.parametrize("seed", [7, 1, 2])
def test_repo_key_quotes_at_cited_lines(tmp_path, seed):
    root = tmp_path / "r"
    key = frepo.write_repo(str(root) + "/", seed=seed)
    assert json.loads((tmp_path / "r.truth.json").read_text()) == key
    assert len(key["facts"]) >= 6 and len(key["false_doc_claims"]) >= 4
    assert key["unanswerable_questions"]
    for f in key["facts"]:
        lines = (root / f["path"]).read_text().split("\n")
        assert 1 <= f["line_start"] <= f["line_end"] <= len(lines)
        cited = "\n".join(lines[f["line_start"] - 1:f["line_end"]])
        assert f["quote"] in cited, f
        assert f["question"] and f["claim"]
    for c in key["false_doc_claims"]:
        lines = (root / c["path"]).read_text().split("\n")
        assert lines[c["line"] - 1] == c["text"]
    files = key["files"]
    on_disk = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    assert on_disk == files["all"]
    assert 25 <= len(files["source"]) <= 60
    for rel in files["binary"]:
        assert b"\x00" in (root / rel).read_bytes()
    gitignore = (root / ".gitignore").read_text()
    assert "build/" in gitignore and "node_modules/" in gitignore


def test_repo_key_is_the_one_the_string_generator_wrote(tmp_path):
    """The template folder reproduces the key of the former 755-line string generator (seed 7)."""
    key = frepo.write_repo(tmp_path / "r", seed=7)
    assert key["values"] == {"RETRIES": 3, "TIMEOUT": "15.0", "RATE": 90, "TRUNC": 1000,
                             "PAGE": 100, "VAT": "0.19", "TTL_MIN": 20, "BACKOFF": "0.25"}
    assert [(f["id"], f["path"], f["line_start"], f["line_end"]) for f in key["facts"]] == [
        ("retry_limit", "parcelpost/net/client.py", 14, 14),
        ("default_timeout", "parcelpost/config.py", 9, 9),
        ("rate_limit", "parcelpost/net/client.py", 23, 23),
        ("comment_truncation", "parcelpost/orders/comments.py", 10, 14),
        ("page_size_clamp", "parcelpost/orders/service.py", 31, 31),
        ("page_size_value", "parcelpost/orders/service.py", 10, 10),
        ("vat_rate", "parcelpost/orders/invoice.py", 9, 9),
        ("session_ttl", "parcelpost/accounts/sessions.py", 8, 8),
        ("password_hash", "parcelpost/accounts/passwords.py", 12, 12)]
    assert [(c["path"], c["line"]) for c in key["false_doc_claims"]] == [
        ("README.md", 9), ("docs/configuration.md", 11), ("docs/configuration.md", 13),
        ("docs/security.md", 4), ("docs/api.md", 6), ("docs/api.md", 10), ("docs/api.md", 18)]
    assert key["facts"][0]["claim"].endswith("(MAX_RETRIES = 3, so 4 attempts in all).")
    assert "see parcelpost/accounts/passwords.py:12-12" in key["false_doc_claims"][0]["truth"]
    assert (len(key["files"]["all"]), len(key["files"]["source"])) == (46, 38)


def test_repo_template_placeholders_are_all_in_the_key():
    import tomllib

    spec = tomllib.loads(frepo.KEY.read_text("utf-8"))
    used = set()
    for p in frepo.TEMPLATE.rglob("*.tmpl"):
        used |= set(re.findall(r"@@([A-Za-z_:]+)@@", p.read_text("utf-8")))
    assert used and used <= set(spec["values"])
    assert not list(frepo.TEMPLATE.rglob(".*"))  # dot files are dot_x, never live dot files


def test_nothing_in_the_runtime_imports_the_fixture_generators():
    """Only the `rlm fixture ...` command may import rlm.fixtures (lazily, inside itself)."""
    import ast
    from pathlib import Path

    import rlm

    offenders = []
    for path in Path(rlm.__file__).parent.rglob("*.py"):
        tree = ast.parse(path.read_text("utf-8"))
        parents = {c: n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if not any(n == "rlm.fixtures" or n.startswith(("rlm.fixtures.", "fixtures"))
                       for n in names):
                continue
            fn = node
            while fn in parents and not isinstance(fn, ast.FunctionDef):
                fn = parents[fn]
            where = getattr(fn, "name", "<module>")
            if not where.startswith("fixture_"):
                offenders.append(f"{path.name}:{node.lineno} in {where}")
    assert offenders == []
