"""A folder of logs is one corpus: one template table, per-file line numbers, a shared id
across files is one story, rotated and .gz files read oldest first."""

from __future__ import annotations

import gzip
import json

from rlm.corpus.logset import LogSet, rotation_key, time_order
from rlm.corpus.open import open_corpus
from rlm.corpus.profile import profile_log
from rlm.testing import run_cli

SID = "S-7QK2PZ"


def noise(day: int, n: int, start: int = 0) -> list[str]:
    return [f"2024-03-{day:02d}T{(start + i) // 3600 % 24:02d}:{(start + i) // 60 % 60:02d}:"
            f"{(start + i) % 60:02d}Z INFO  [api] req={i:06x}a GET /v1/items status=200 {i % 90}ms"
            for i in range(n)]


def write_folder(root):
    """api.log.2.gz (oldest), api.log.1, api.log (newest) and auth.log; one session id
    appears in three files."""
    root.mkdir()
    old = noise(1, 3000)
    old[1200] = f"2024-03-01T00:20:00Z WARN  [auth] sess={SID} user=jdoe role elevated to superadmin"
    with gzip.open(root / "api.log.2.gz", "wt") as f:
        f.write("\n".join(old) + "\n")
    mid = noise(2, 3000)
    mid[700] = f"2024-03-02T00:11:40Z INFO  [export] sess={SID} user=jdoe full export of customers rows=1200000"
    (root / "api.log.1").write_text("\n".join(mid) + "\n")
    new = noise(3, 3000)
    new[2500] = "2024-03-03T00:41:40Z ERROR [ledger] panic: nil pointer dereference txn=TXN-4242"
    (root / "api.log").write_text("\n".join(new) + "\n")
    auth = noise(3, 2000)
    auth[1500] = f"2024-03-03T00:25:00Z WARN  [audit] sess={SID} user=jdoe audit trail purged entries=4000"
    (root / "auth.log").write_text("\n".join(auth) + "\n")


def test_rotation_order():
    assert rotation_key("app.log.2.gz") == ("app.log", 2)
    assert rotation_key("app.log") == ("app.log", 0)
    assert rotation_key("app.log.1") == ("app.log", 1)

    class S:
        def __init__(self, d):
            self.display = d

    got = [s.display for s in time_order([S("app.log"), S("app.log.1"), S("app.log.10.gz"),
                                          S("app.log.2.gz"), S("db.log")])]
    assert got == ["app.log.10.gz", "app.log.2.gz", "app.log.1", "app.log", "db.log"]


def test_folder_of_logs_is_one_log_in_time_order(tmp_path):
    root = tmp_path / "logs"
    write_folder(root)
    c = open_corpus(str(root))
    try:
        assert c.probe.kind == "log" and c.probe.files == 4
        assert [s.display for s in c.sources] == ["api.log.2.gz", "api.log.1", "api.log", "auth.log"]
        ls = LogSet(c.sources)
        assert ls.line_count == 11_000
        src, line = ls.locate(3000 + 701)
        assert (src.display, line) == ("api.log.1", 701) and SID in src.line(line)
        prof = profile_log(ls)
    finally:
        c.close()
    # one template table across files: the noise is one shape, the four needles are rare
    assert prof.templates_total <= 6
    assert prof.candidates == [1201, 3701, 8501, 10501]


def test_ask_on_a_folder_profiles_and_joins_the_story_across_files(tmp_path):
    root = tmp_path / "logs"
    write_folder(root)
    r = run_cli("ask", str(root), "anomalies?", "--json", "--model", "none")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["strategy"] == "profile"
    spots = {(f["source"]["path"], f["source"]["line_start"]) for f in rep["findings"]}
    assert spots == {("api.log.2.gz", 1201), ("api.log.1", 701), ("api.log", 2501),
                     ("auth.log", 1501)}
    story = [g for g in rep["groups"] if g["kind"] == "identifier"]
    assert len(story) == 1 and story[0]["key"] == SID
    assert story[0]["paths"] == ["api.log.2.gz", "api.log.1", "auth.log"]
    assert story[0]["lines"] == [1201, 701, 1501]
    assert all(f["rules"] for f in rep["findings"])
