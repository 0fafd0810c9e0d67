"""Run records and the call cache: sqlite3 (stdlib), WAL mode, one commit per write, migrations.

- ``cache``: the call cache (``<user cache dir>/calls.sqlite3``, env ``RLM_CACHE_DIR``);
- ``runs``: run records and their events (``<user data dir>/runs.sqlite3``, env ``RLM_DATA_DIR``);
- ``migrations``: the ordered schema steps of both files and the ``_migrations`` table;
- ``secrets``: argv redaction and scrubbing, so neither file ever holds an API key;
- ``db``: where the files live and how they are opened.

A store that cannot be opened (read-only home, full disk) never fails a run: the run goes on
without cache or record and says so once on stderr.
"""

from rlm.store.cache import CACHE_KEY_VERSION, CallCache, wrap_model
from rlm.store.db import CACHE_ENV, DATA_ENV, cache_dir, data_dir
from rlm.store.runs import RECORDED_EVENTS, Recorder, RunStore, record_run
from rlm.store.secrets import redact_argv, scrub, secret_values

__all__ = ["CACHE_ENV", "CACHE_KEY_VERSION", "DATA_ENV", "RECORDED_EVENTS", "CallCache", "Recorder",
           "RunStore", "cache_dir", "data_dir", "record_run", "redact_argv", "scrub",
           "secret_values", "wrap_model"]
