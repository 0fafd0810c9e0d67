"""The call cache (``<user cache dir>/calls.sqlite3``): validated model replies by request hash.

Key = sha256 of the model name (never the base URL or key), the messages, the JSON schema and its
name, max_tokens and temperature; value = the response text, its parsed JSON and the usage it
cost. Only replies that parsed as JSON are stored, and a reply the caller then rejects (schema
validation) is deleted again (``CallCache.delete`` through ``CachedModel.forget``). The
connection runs with synchronous=OFF: the cache is disposable.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import orjson

from rlm.store.db import cache_dir, connect, warn
from rlm.store.migrations import cache_migrations
from rlm.store.secrets import secret_values

CACHE_KEY_VERSION = "rlm-call-v1"


class CallCache:
    """sqlite3 key/value store of validated model replies."""

    def __init__(self, path: Path | None = None):
        self.path = path or cache_dir() / "calls.sqlite3"
        self._lock = threading.Lock()
        self._con = connect(self.path, cache_migrations, synchronous="OFF")
        self._secrets = secret_values()

    @staticmethod
    def key(model: str, messages: list[dict], schema: dict | None, schema_name: str,
            max_tokens: int, temperature: float) -> str:
        blob = orjson.dumps([CACHE_KEY_VERSION, model, messages, schema, schema_name,
                             int(max_tokens), float(temperature)], option=orjson.OPT_SORT_KEYS)
        return hashlib.sha256(blob).hexdigest()

    def get(self, key: str) -> tuple[str, Any, int, int] | None:
        with self._lock:
            row = self._con.execute("SELECT text, data, prompt_tokens, completion_tokens FROM calls "
                                    "WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        data = orjson.loads(row[1]) if row[1] is not None else None
        return row[0], data, row[2] or 0, row[3] or 0

    def put(self, key: str, model: str, text: str, data: Any, prompt_tokens: int,
            completion_tokens: int) -> bool:
        """Store one reply; refused (False) when it contains a secret value."""
        if any(s in text for s in self._secrets):
            return False
        with self._lock:
            self._con.execute("INSERT OR REPLACE INTO calls (key, model, created, text, data, "
                              "prompt_tokens, completion_tokens) VALUES (?, ?, ?, ?, ?, ?, ?)",
                              (key, model, time.time(), text,
                               None if data is None else orjson.dumps(data).decode(),
                               prompt_tokens, completion_tokens))
        return True

    def delete(self, key: str) -> None:
        with self._lock:
            self._con.execute("DELETE FROM calls WHERE key = ?", (key,))

    def __len__(self) -> int:
        with self._lock:
            return self._con.execute("SELECT count(*) FROM calls").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._con.close()


def wrap_model(model, opts) -> Any:
    """The resolved model behind the call cache. ``--no-cache`` means: do not answer from the
    cache (fresh calls), but keep storing answers so the run can still be resumed. A resumed run
    always reads the cache. Dry runs make no calls and get no cache."""
    if getattr(opts, "dry_run", False):
        return model
    from rlm.models.cached import CachedModel

    try:
        cache = CallCache()
    except (OSError, sqlite3.Error) as e:
        warn(f"call cache unavailable ({e}); running without it")
        return model
    read = not getattr(opts, "no_cache", False) or bool(getattr(opts, "resume", None))
    return CachedModel(model, cache, read=read)
