"""Where rlm's databases live and how they are opened (sqlite3, WAL, autocommit)."""

from __future__ import annotations

import os
import sqlite3
import time
import sys
from pathlib import Path

from rlm.store.migrations import Migrations

CACHE_ENV, DATA_ENV = "RLM_CACHE_DIR", "RLM_DATA_DIR"


def cache_dir() -> Path:
    v = os.environ.get(CACHE_ENV, "").strip()
    if v:
        return Path(v).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("rlm", appauthor=False))


def data_dir() -> Path:
    v = os.environ.get(DATA_ENV, "").strip()
    if v:
        return Path(v).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir("rlm", appauthor=False))


def connect(path: Path, migrations: Migrations, synchronous: str = "NORMAL") -> sqlite3.Connection:
    """Open (creating it private if new) and bring the schema up to date."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    new = not path.exists()
    con = sqlite3.connect(str(path), timeout=15.0, isolation_level=None, check_same_thread=False)
    if new:
        try:
            os.chmod(path, 0o600)  # reports quote the corpus: keep them private
        except OSError:
            pass
    _retry_locked(lambda: con.execute("PRAGMA journal_mode=WAL"))
    # WAL with NORMAL or OFF: every commit survives a killed process (only an OS crash or power
    # loss can lose recent commits, and with OFF corrupt the file: fine for the disposable cache,
    # whose fsyncs at each WAL checkpoint would otherwise stall the event loop for ~10-50 ms)
    con.execute(f"PRAGMA synchronous={synchronous}")
    _retry_locked(lambda: migrations.apply(con))
    return con


def _retry_locked(step, attempts: int = 6) -> None:
    """Switching an old file to WAL needs an exclusive lock, and SQLite may answer "database is
    locked" at once instead of waiting out the busy timeout when several processes open the same
    old file together (seen under load); the step is idempotent, so try again a few times."""
    for k in range(attempts):
        try:
            step()
            return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) and "busy" not in str(e) or k == attempts - 1:
                raise
            time.sleep(0.05 * 2 ** k)


def warn(msg: str) -> None:
    print(f"rlm: warning: {msg}", file=sys.stderr)
