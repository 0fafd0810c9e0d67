"""Store migrations (rlm/store/migrations.py): files written by the previous schema still open."""

from __future__ import annotations

import sqlite3
import threading

import orjson
import pytest

from rlm.store import CallCache, RunStore
from rlm.store.migrations import Migrations, applied, cache_migrations, runs_migrations

# The schema rlm wrote before migrations existed (rlm/store.py at 06dfd1f), verbatim.
OLD_RUNS_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS runs (id TEXT PRIMARY KEY, created REAL, finished REAL, "
    "command TEXT, argv TEXT, options TEXT, corpus TEXT, question TEXT, strategy TEXT, "
    "status TEXT, complete INTEGER, chunks_total INTEGER, chunks_ok INTEGER, "
    "chunks_failed INTEGER, tokens INTEGER, calls INTEGER, cached_calls INTEGER, "
    "resumed_from TEXT, pid INTEGER, error TEXT, report TEXT);"
    "CREATE TABLE IF NOT EXISTS events (run_id TEXT, seq INTEGER, t REAL, kind TEXT, "
    "data TEXT, PRIMARY KEY (run_id, seq));"
    "CREATE INDEX IF NOT EXISTS runs_created ON runs (created);")
OLD_CALLS_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, model TEXT, created REAL, "
    "text TEXT NOT NULL, data TEXT, prompt_tokens INTEGER, completion_tokens INTEGER)")


def old_runs_db(path):
    con = sqlite3.connect(path)
    con.executescript(OLD_RUNS_SCHEMA)
    report = {"coverage": {"complete": True, "chunks_total": 2}, "answer": "forty-two"}
    con.execute("INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                "?, ?)", ("20250101-000000-abcd", 1735689600.0, 1735689660.0,
                          "rlm ask c.txt 'why?'", '["ask", "c.txt", "why?"]', '{"model": "fake"}',
                          "c.txt", "why?", "fanout", "done", 1, 2, 2, 0, 1234, 3, 0, None, 4242,
                          None, orjson.dumps(report).decode()))
    con.execute("INSERT INTO events VALUES (?, 1, 1735689601.0, 'chunk', ?)",
                ("20250101-000000-abcd", '{"chunk": "c1", "ok": true}'))
    con.commit()
    con.close()


def columns(path, table):
    con = sqlite3.connect(path)
    try:
        return [r[1] for r in con.execute(f"PRAGMA table_info({table})")]
    finally:
        con.close()


def test_runs_db_from_previous_schema_is_upgraded_and_readable(tmp_path):
    path = tmp_path / "runs.sqlite3"
    old_runs_db(path)
    assert "stopped" not in columns(path, "runs")

    store = RunStore(path)
    run = store.get(store.resolve("abcd"))
    assert run["question"] == "why?" and run["status"] == "done" and run["complete"] is True
    assert run["report"]["answer"] == "forty-two" and run["argv"] == ["ask", "c.txt", "why?"]
    assert run["stopped"] is None  # the column a migration added, empty for the old row
    assert [e["data"]["chunk"] for e in store.events(run["id"], "chunk")] == ["c1"]
    assert [r["id"] for r in store.list()] == ["20250101-000000-abcd"]
    store.close()

    assert "stopped" in columns(path, "runs")
    con = sqlite3.connect(path)
    assert applied(con) == runs_migrations.names()
    indexes = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert "events_run_kind" in indexes
    con.close()
    # a new run goes into the upgraded file beside the old one
    store = RunStore(path)
    rec = store.start("20250102-000000-beef", command="rlm ask x q", argv=[], options={},
                      corpus="x", question="q")
    rec.event("chunk", {"chunk": "c9", "ok": False})
    store = RunStore(path)
    assert {r["id"] for r in store.list()} == {"20250101-000000-abcd", "20250102-000000-beef"}
    store.close()


def test_fresh_runs_db_is_built_by_the_migrations_alone(tmp_path):
    fresh, old = tmp_path / "fresh.sqlite3", tmp_path / "old.sqlite3"
    RunStore(fresh).close()
    old_runs_db(old)
    RunStore(old).close()
    assert columns(fresh, "runs") == columns(old, "runs")
    assert columns(fresh, "events") == columns(old, "events")


def test_calls_db_from_previous_schema_keeps_its_answers(tmp_path):
    path = tmp_path / "calls.sqlite3"
    con = sqlite3.connect(path)
    con.execute(OLD_CALLS_SCHEMA)
    con.execute("INSERT INTO calls VALUES ('k1', 'fake', 1.0, '{\"a\": 1}', '{\"a\": 1}', 10, 2)")
    con.commit()
    con.close()
    cache = CallCache(path)
    assert cache.get("k1") == ('{"a": 1}', {"a": 1}, 10, 2)
    assert len(cache) == 1
    cache.close()
    con = sqlite3.connect(path)
    assert applied(con) == cache_migrations.names()
    con.close()


def test_migrations_apply_once_in_order_and_roll_back_on_error(tmp_path):
    steps = Migrations("test")
    ran: list[str] = []

    @steps
    def m001_a(con):
        ran.append("a")
        con.execute("CREATE TABLE t (x INTEGER)")

    con = sqlite3.connect(tmp_path / "t.sqlite3", isolation_level=None)
    assert steps.apply(con) == ["m001_a"]
    assert steps.apply(con) == []  # already applied: nothing runs again

    @steps
    def m002_broken(con):
        ran.append("b")
        con.execute("ALTER TABLE t ADD COLUMN y TEXT")
        raise RuntimeError("half done")

    with pytest.raises(RuntimeError):
        steps.apply(con)
    assert [r[1] for r in con.execute("PRAGMA table_info(t)")] == ["x"]  # rolled back
    assert applied(con) == ["m001_a"]
    assert ran == ["a", "b"]
    with pytest.raises(ValueError):
        steps(m001_a)  # a name is registered once


def test_two_processes_opening_an_old_file_upgrade_it_once(tmp_path):
    path = tmp_path / "runs.sqlite3"
    old_runs_db(path)
    errors: list[BaseException] = []

    def open_it():
        try:
            RunStore(path).close()
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=open_it) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    con = sqlite3.connect(path)
    assert applied(con) == runs_migrations.names()  # each step recorded exactly once
    con.close()
