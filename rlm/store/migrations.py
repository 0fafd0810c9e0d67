"""Schema migrations for rlm's sqlite databases, in the style of simonw/llm's migrations.py.

Each database has an ordered list of migrations: plain functions that take a connection and
change the schema one step. A table ``_migrations`` records the name of every migration that
was applied and when. Opening a database applies, in order, every migration it has not seen,
inside one ``BEGIN IMMEDIATE`` transaction (two processes opening the same old file at once
cannot both upgrade it). So the current schema is always what the migrations build from an
empty file, and a file written by any earlier version of rlm is brought up to date on open.

Rules for adding one: append a new function (never edit or reorder an applied one); make it
additive where possible (ADD COLUMN, CREATE INDEX) so an older rlm can still read the file.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable

Migration = Callable[[sqlite3.Connection], None]


class Migrations:
    """An ordered, named list of migrations for one database."""

    def __init__(self, db_name: str):
        self.db_name = db_name
        self.steps: list[Migration] = []

    def __call__(self, fn: Migration) -> Migration:
        """Decorator: register ``fn`` as the next migration (its name is its identity)."""
        if any(s.__name__ == fn.__name__ for s in self.steps):
            raise ValueError(f"migration {fn.__name__} registered twice for {self.db_name}")
        self.steps.append(fn)
        return fn

    def names(self) -> list[str]:
        return [s.__name__ for s in self.steps]

    def apply(self, con: sqlite3.Connection) -> list[str]:
        """Apply the pending migrations in order; return the names applied now.

        ``con`` must be in autocommit mode (isolation_level=None): the transaction is ours."""
        con.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied REAL)")
        if self._pending(con) == []:
            return []  # the common case: no write lock taken
        con.execute("BEGIN IMMEDIATE")
        try:
            todo = self._pending(con)  # again, under the lock: another process may have won
            for step in todo:
                step(con)
                con.execute("INSERT INTO _migrations (name, applied) VALUES (?, ?)",
                            (step.__name__, time.time()))
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        return [s.__name__ for s in todo]

    def _pending(self, con: sqlite3.Connection) -> list[Migration]:
        done = {r[0] for r in con.execute("SELECT name FROM _migrations")}
        return [s for s in self.steps if s.__name__ not in done]


def applied(con: sqlite3.Connection) -> list[str]:
    """Names of the migrations applied to this database, oldest first."""
    return [r[0] for r in con.execute("SELECT name FROM _migrations ORDER BY applied, rowid")]


# ----------------------------------------------------------------------------- runs.sqlite3

runs_migrations = Migrations("runs")


@runs_migrations
def m001_runs_and_events(con: sqlite3.Connection) -> None:
    # IF NOT EXISTS: a file written before migrations existed already has exactly these tables
    con.execute(
        "CREATE TABLE IF NOT EXISTS runs (id TEXT PRIMARY KEY, created REAL, finished REAL, "
        "command TEXT, argv TEXT, options TEXT, corpus TEXT, question TEXT, strategy TEXT, "
        "status TEXT, complete INTEGER, chunks_total INTEGER, chunks_ok INTEGER, "
        "chunks_failed INTEGER, tokens INTEGER, calls INTEGER, cached_calls INTEGER, "
        "resumed_from TEXT, pid INTEGER, error TEXT, report TEXT)")
    con.execute("CREATE TABLE IF NOT EXISTS events (run_id TEXT, seq INTEGER, t REAL, kind TEXT, "
                "data TEXT, PRIMARY KEY (run_id, seq))")
    con.execute("CREATE INDEX IF NOT EXISTS runs_created ON runs (created)")


@runs_migrations
def m002_runs_stopped(con: sqlite3.Connection) -> None:
    # why an audit or mine ended its rounds (settled, max_rounds, budget, interrupted): its own
    # field, so `rlm runs` can show it without reading the report
    con.execute("ALTER TABLE runs ADD COLUMN stopped TEXT")


@runs_migrations
def m003_events_by_kind(con: sqlite3.Connection) -> None:
    # `rlm runs` counts a running run's chunk events and resume reads them by kind
    con.execute("CREATE INDEX IF NOT EXISTS events_run_kind ON events (run_id, kind)")


# ----------------------------------------------------------------------------- calls.sqlite3

cache_migrations = Migrations("calls")


@cache_migrations
def m001_calls(con: sqlite3.Connection) -> None:
    con.execute(
        "CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, model TEXT, created REAL, "
        "text TEXT NOT NULL, data TEXT, prompt_tokens INTEGER, completion_tokens INTEGER)")
