"""Partial tables of a scan that did not finish, kept so that a resumed run scans only the
shards that failed (on either executor).

When a scan has a failed shard, or was interrupted (Ctrl-C), the tables of the shards that
finished are written here (the user cache dir, ``shards/``), each under a key of the file (absolute path, size, mtime), the
byte range, the scan function and its arguments. The next scan of the same shards takes them
from here instead of scanning again, and removes them once its own scan is whole. Files are
read back with an unpickler that only builds the table's own class and arrays.
"""

from __future__ import annotations

import hashlib
import io
import os
import pickle
from pathlib import Path
from typing import Any

from rlm.executor.shards import Shard

FORMAT = 1


def store_dir() -> Path:
    v = os.environ.get("RLM_CACHE_DIR")
    if v:
        return Path(v).expanduser() / "shards"
    import platformdirs

    return Path(platformdirs.user_cache_dir("rlm", appauthor=False)) / "shards"


def shard_key(fn: Any, shard: Shard, args: tuple) -> str:
    st = os.stat(shard.path)
    ident = (FORMAT, fn.__module__, fn.__qualname__, os.path.abspath(shard.path), st.st_size,
             st.st_mtime_ns, shard.start, shard.end, repr(args))
    return hashlib.sha256(repr(ident).encode()).hexdigest()[:32]


class _TableUnpickler(pickle.Unpickler):
    def __init__(self, data: bytes, allowed: type):
        super().__init__(io.BytesIO(data))
        self.allowed = allowed

    def find_class(self, module: str, name: str):
        if (module, name) == (self.allowed.__module__, self.allowed.__qualname__):
            return self.allowed
        if module == "array" and name in ("array", "_array_reconstructor"):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"not a scan table: {module}.{name}")


class ShardStore:
    def __init__(self, table_type: type, root: Path | None = None):
        self.root = root or store_dir()
        self.table_type = table_type

    def get(self, key: str) -> Any | None:
        p = self.root / f"{key}.pkl"
        try:
            data = p.read_bytes()
        except OSError:
            return None
        try:
            value = _TableUnpickler(data, self.table_type).load()
        except Exception:  # noqa: BLE001 - a damaged entry is scanned again
            return None
        return value if isinstance(value, self.table_type) else None

    def put(self, key: str, value: Any) -> None:
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            tmp = self.root / f"{key}.tmp"
            tmp.write_bytes(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
            tmp.replace(self.root / f"{key}.pkl")
        except OSError:
            pass  # no store: a resumed run scans everything again

    def drop(self, key: str) -> None:
        try:
            (self.root / f"{key}.pkl").unlink()
        except OSError:
            pass
