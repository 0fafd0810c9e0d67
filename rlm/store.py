"""Run records and the call cache: sqlite3 (stdlib), WAL mode, one commit per write.

- **Call cache** (``<user cache dir>/calls.sqlite3``, env ``RLM_CACHE_DIR``): key = sha256 of the
  model name (never the base URL or key), the messages, the JSON schema and its name, max_tokens
  and temperature; value = the response text, its parsed JSON and the usage it cost. Only replies
  that parsed as JSON are stored, and a reply the caller then rejects (schema validation) is
  deleted again (``CallCache.delete`` through ``CachedModel.forget``).
- **Run records** (``<user data dir>/runs.sqlite3``, env ``RLM_DATA_DIR``): table ``runs`` (one row
  per run: the command, argv without secrets, options, corpus, strategy, status, coverage, tokens
  and the final JSON report) and table ``events`` (appended as the run goes: gate, plan, one row
  per finished chunk with its findings, reduce notes, the final report).

Every write is its own transaction (autocommit) in WAL mode, so a run killed with SIGKILL loses
only the calls in flight: every answered call is already in the cache, every finished chunk in
the events. Neither database ever holds an API key or an Authorization header: argv values of
key-like options are replaced by ``***``, base URLs lose user:password@ and query strings, and
every string written is scrubbed of the values of secret-looking environment variables.

A store that cannot be opened (read-only home, full disk) never fails a run: the run goes on
without cache or record and says so once on stderr.
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from rlm.errors import UsageError

CACHE_ENV, DATA_ENV = "RLM_CACHE_DIR", "RLM_DATA_DIR"
CACHE_KEY_VERSION = "rlm-call-v1"
# events written to the run record (progress-only events such as "start" are not)
RECORDED_EVENTS = {"gate", "plan", "chunk", "reduce", "report", "resume"}

_SECRET_ENV = re.compile(r"(KEY|TOKEN|SECRET|PASSW|AUTH|CREDENTIAL)", re.IGNORECASE)
_SECRET_FLAG = re.compile(r"^--?[\w-]*(api[-_]?key|key|token|secret|passw(or)?d?|auth\w*|credential\w*)$",
                          re.IGNORECASE)
_SECRET_SHAPES = re.compile(r"(\bsk-[A-Za-z0-9_\-]{8,}|\bBearer\s+[A-Za-z0-9._~+/=\-]{8,})")


# ----------------------------------------------------------------------------------- places

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


def _connect(path: Path, synchronous: str = "NORMAL") -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    new = not path.exists()
    con = sqlite3.connect(str(path), timeout=15.0, isolation_level=None, check_same_thread=False)
    if new:
        try:
            os.chmod(path, 0o600)  # reports quote the corpus: keep them private
        except OSError:
            pass
    con.execute("PRAGMA journal_mode=WAL")
    # WAL with NORMAL or OFF: every commit survives a killed process (only an OS crash or power
    # loss can lose recent commits, and with OFF corrupt the file: fine for the disposable cache,
    # whose fsyncs at each WAL checkpoint would otherwise stall the event loop for ~10-50 ms)
    con.execute(f"PRAGMA synchronous={synchronous}")
    return con


# ----------------------------------------------------------------------------------- secrets

def secret_values(extra: list[str | None] | None = None) -> list[str]:
    """Values that must never be written: secret-looking env vars and explicit keys."""
    vals = {v for k, v in os.environ.items()
            if _SECRET_ENV.search(k) and v and len(v.strip()) >= 6 and v.strip()[0] not in "/~."}
    vals |= {v for v in (extra or []) if v and len(v) >= 4}
    return sorted((v.strip() for v in vals), key=len, reverse=True)


def scrub(text: str, secrets: list[str]) -> str:
    for s in secrets:
        if s and s in text:
            text = text.replace(s, "***")
    return _SECRET_SHAPES.sub("***", text)


def _redact_url(url: str | None) -> str | None:
    if not url:
        return url
    from rlm.models.openai_compat import redact_url

    return redact_url(url)


def redact_argv(argv: list[str], secrets: list[str] | None = None) -> list[str]:
    """argv without secrets: values of key-like options become ***, URLs lose credentials."""
    secrets = secret_values() if secrets is None else secrets
    out: list[str] = []
    hide_next = url_next = False
    for a in argv:
        if hide_next:
            out.append("***")
            hide_next = False
            continue
        if url_next:
            out.append(_redact_url(a) or a)
            url_next = False
            continue
        flag, eq, val = a.partition("=")
        if a.startswith("-") and _SECRET_FLAG.match(flag):
            if eq:
                out.append(f"{flag}=***")
            else:
                out.append(a)
                hide_next = True
            continue
        if a.startswith("-") and flag == "--base-url":
            if eq:
                out.append(f"{flag}={_redact_url(val)}")
            else:
                out.append(a)
                url_next = True
            continue
        if re.match(r"^https?://", a):
            a = _redact_url(a) or a
        out.append(scrub(a, secrets))
    return out


def _dumps(obj: Any, secrets: list[str]) -> str:
    return scrub(orjson.dumps(obj, default=_default).decode(), secrets)


def _default(o: Any) -> Any:
    if hasattr(o, "model_dump"):
        return o.model_dump(mode="json")
    if isinstance(o, (set, tuple)):
        return list(o)
    return str(o)  # a record must never fail on an odd value


def _warn(msg: str) -> None:
    print(f"rlm: warning: {msg}", file=sys.stderr)


# ----------------------------------------------------------------------------------- call cache

class CallCache:
    """sqlite3 key/value store of validated model replies."""

    def __init__(self, path: Path | None = None):
        self.path = path or cache_dir() / "calls.sqlite3"
        self._lock = threading.Lock()
        self._con = _connect(self.path, synchronous="OFF")
        self._con.execute(
            "CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, model TEXT, created REAL, "
            "text TEXT NOT NULL, data TEXT, prompt_tokens INTEGER, completion_tokens INTEGER)")
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
            self._con.execute("INSERT OR REPLACE INTO calls VALUES (?, ?, ?, ?, ?, ?, ?)",
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
        _warn(f"call cache unavailable ({e}); running without it")
        return model
    read = not getattr(opts, "no_cache", False) or bool(getattr(opts, "resume", None))
    return CachedModel(model, cache, read=read)


# ----------------------------------------------------------------------------------- run records

_RUN_COLS = ("id", "created", "finished", "command", "argv", "options", "corpus", "question",
             "strategy", "status", "complete", "chunks_total", "chunks_ok", "chunks_failed",
             "tokens", "calls", "cached_calls", "resumed_from", "pid", "error", "report")


class RunStore:
    """The run history: one row per run plus its append-only events."""

    def __init__(self, path: Path | None = None):
        self.path = path or data_dir() / "runs.sqlite3"
        self._lock = threading.Lock()
        self._con = _connect(self.path)
        self._con.executescript(
            "CREATE TABLE IF NOT EXISTS runs (id TEXT PRIMARY KEY, created REAL, finished REAL, "
            "command TEXT, argv TEXT, options TEXT, corpus TEXT, question TEXT, strategy TEXT, "
            "status TEXT, complete INTEGER, chunks_total INTEGER, chunks_ok INTEGER, "
            "chunks_failed INTEGER, tokens INTEGER, calls INTEGER, cached_calls INTEGER, "
            "resumed_from TEXT, pid INTEGER, error TEXT, report TEXT);"
            "CREATE TABLE IF NOT EXISTS events (run_id TEXT, seq INTEGER, t REAL, kind TEXT, "
            "data TEXT, PRIMARY KEY (run_id, seq));"
            "CREATE INDEX IF NOT EXISTS runs_created ON runs (created);")

    def execute(self, sql: str, args: tuple = ()) -> list[tuple]:
        with self._lock:
            return self._con.execute(sql, args).fetchall()

    def close(self) -> None:
        with self._lock:
            self._con.close()

    # -- reading
    def resolve(self, ref: str) -> str:
        """A run id from ``last``, a full id, a unique prefix of the id or of its random part."""
        ref = (ref or "").strip()
        if not ref:
            raise UsageError("no run given (an id, a unique prefix of one, or 'last')")
        if ref == "last":
            row = self.execute("SELECT id FROM runs ORDER BY created DESC LIMIT 1")
            if not row:
                raise UsageError(f"no recorded runs yet (in {self.path.parent})")
            return row[0][0]
        esc = ref.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        rows = self.execute("SELECT id FROM runs WHERE id LIKE ? ESCAPE '\\' OR id LIKE ? ESCAPE '\\' "
                            "ORDER BY created DESC", (esc + "%", "%-" + esc + "%"))
        ids = [r[0] for r in rows if r[0].startswith(ref) or r[0].rsplit("-", 1)[-1].startswith(ref)]
        if ref in ids:
            return ref
        if not ids:
            raise UsageError(f"no recorded run matches {ref!r} (see `rlm runs`)")
        if len(ids) > 1:
            raise UsageError(f"{ref!r} matches {len(ids)} runs ({', '.join(ids[:4])}"
                             f"{', …' if len(ids) > 4 else ''}): give more of the id")
        return ids[0]

    def get(self, run_id: str) -> dict:
        rows = self.execute(f"SELECT {', '.join(_RUN_COLS)} FROM runs WHERE id = ?", (run_id,))
        if not rows:
            raise UsageError(f"no recorded run {run_id!r}")
        return self._row(rows[0])

    def _row(self, row: tuple) -> dict:
        d = dict(zip(_RUN_COLS, row))
        for k in ("argv", "options", "report"):
            d[k] = orjson.loads(d[k]) if d[k] else None
        d["complete"] = None if d["complete"] is None else bool(d["complete"])
        if d["status"] == "running" and not _alive(d["pid"]):
            d["status"] = "died"  # SIGKILL, power loss: the process is gone without a report
        if d["status"] in ("running", "died"):
            try:
                counts = dict(self.execute(
                    "SELECT json_extract(data, '$.ok'), count(*) FROM events WHERE run_id = ? AND "
                    "kind = 'chunk' GROUP BY 1", (d["id"],)))
            except sqlite3.OperationalError:  # an sqlite without JSON1
                counts = {1: 0, 0: 0}
                for (data,) in self.execute("SELECT data FROM events WHERE run_id = ? AND "
                                            "kind = 'chunk'", (d["id"],)):
                    counts[int(bool(orjson.loads(data).get("ok")))] += 1
            d["chunks_ok"] = counts.get(1, 0)
            d["chunks_failed"] = counts.get(0, 0)
            plan = self.execute("SELECT data FROM events WHERE run_id = ? AND kind = 'plan' "
                                "ORDER BY seq DESC LIMIT 1", (d["id"],))
            if plan:
                d["chunks_total"] = orjson.loads(plan[0][0]).get("total")
        return d

    def list(self, limit: int = 20) -> list[dict]:
        rows = self.execute(f"SELECT {', '.join(_RUN_COLS)} FROM runs ORDER BY created DESC "
                            "LIMIT ?", (limit,))
        return [self._row(r) for r in rows]

    def events(self, run_id: str, kind: str | None = None) -> list[dict]:
        sql = "SELECT seq, t, kind, data FROM events WHERE run_id = ?"
        args: tuple = (run_id,)
        if kind:
            sql += " AND kind = ?"
            args += (kind,)
        return [{"seq": s, "t": t, "kind": k, "data": orjson.loads(d)}
                for s, t, k, d in self.execute(sql + " ORDER BY seq", args)]

    # -- writing
    def start(self, run_id: str, *, command: str, argv: list[str], options: dict, corpus: str,
              question: str, resumed_from: str | None = None,
              secrets: list[str] | None = None) -> Recorder:
        secrets = secret_values() if secrets is None else secrets
        with self._lock:
            self._con.execute(
                "INSERT INTO runs (id, created, command, argv, options, corpus, question, status, "
                "resumed_from, pid) VALUES (?, ?, ?, ?, ?, ?, ?, 'running', ?, ?)",
                (run_id, time.time(), scrub(command, secrets), _dumps(argv, secrets),
                 _dumps(options, secrets), scrub(corpus, secrets), scrub(question, secrets),
                 resumed_from, os.getpid()))
        return Recorder(self, run_id, secrets)


def _alive(pid: int | None) -> bool:
    if not pid:
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


class Recorder:
    """Appends one run's events as they happen and writes its final report."""

    def __init__(self, store: RunStore, run_id: str, secrets: list[str]):
        self.store, self.run_id, self.secrets = store, run_id, secrets
        self.mask: Callable[[Any], Any] | None = None  # --redact-report: the run's Redactor
        self.seq = 0
        self.broken = False
        self._lock = threading.Lock()

    def event(self, kind: str, data: dict) -> None:
        if kind not in RECORDED_EVENTS or self.broken:
            return
        try:
            with self._lock:
                self.seq += 1
                seq = self.seq
            with self.store._lock:
                self.store._con.execute("INSERT INTO events VALUES (?, ?, ?, ?, ?)",
                                        (self.run_id, seq, time.time(), kind,
                                         _dumps(self._masked(data), self.secrets)))
                if kind == "gate":
                    self.store._con.execute("UPDATE runs SET strategy = ? WHERE id = ?",
                                            (data.get("strategy"), self.run_id))
        except Exception as e:  # noqa: BLE001 - never fail a run for its record
            self.broken = True
            _warn(f"run record stopped ({e})")

    def _masked(self, data: Any) -> Any:
        if self.mask is None:
            return data
        return self.mask(orjson.loads(orjson.dumps(data, default=_default)))

    def wrap(self, emit: Callable[[str, dict], None]) -> Callable[[str, dict], None]:
        def both(kind: str, data: dict) -> None:
            self.event(kind, data)
            emit(kind, data)
        return both

    def close(self, report=None, error: BaseException | None = None) -> None:
        """Final write: the report (status done) or the error that ended the run."""
        try:
            if report is not None:
                rep = report.model_dump(mode="json")
                self.event("report", {"complete": rep["coverage"]["complete"]})
                cov, u = rep["coverage"], rep["usage"]
                status = "done" if cov["complete"] else "incomplete"
                if "interrupted" in " ".join(cov.get("declared") or []):
                    status = "interrupted"
                self.store.execute(
                    "UPDATE runs SET finished = ?, status = ?, strategy = ?, complete = ?, "
                    "chunks_total = ?, chunks_ok = ?, chunks_failed = ?, tokens = ?, calls = ?, "
                    "cached_calls = ?, report = ? WHERE id = ?",
                    (time.time(), status, rep["strategy"], int(bool(cov["complete"])),
                     cov["chunks_total"], cov["chunks_ok"], len(cov["chunks_failed"]),
                     u["prompt_tokens"] + u["completion_tokens"], u["calls"], u["cached_calls"],
                     _dumps(self._masked(rep), self.secrets), self.run_id))
            else:
                while isinstance(error, BaseExceptionGroup) and error.exceptions:
                    error = error.exceptions[0]
                msg = f"{type(error).__name__}: {error}" if error is not None else "ended without a report"
                if isinstance(error, (KeyboardInterrupt,)):
                    msg = "interrupted"
                self.store.execute("UPDATE runs SET finished = ?, status = 'error', error = ? "
                                   "WHERE id = ?", (time.time(), scrub(msg, self.secrets)[:500],
                                                    self.run_id))
        except Exception as e:  # noqa: BLE001 - never fail a run for its record
            _warn(f"could not write the run record ({e})")
        finally:
            self.broken = True  # closed: nothing more is written
            try:
                self.store.close()
            except sqlite3.Error:
                pass


# ----------------------------------------------------------------------------------- api hooks

def _options(opts, path: str) -> dict:
    """AskOptions as stored: no key; effective model/base URL (env included), URL redacted."""
    from dataclasses import asdict

    d = {k: v for k, v in asdict(opts).items() if k not in ("api_key", "resume", "argv")}
    d["model"] = opts.model or os.environ.get("RLM_MODEL") or None
    d["base_url"] = _redact_url(opts.base_url or os.environ.get("RLM_BASE_URL") or None)
    d["path_abs"] = path if path == "-" else os.path.abspath(path)
    return d


def record_run(run, path: str, question: str, opts) -> Recorder | None:
    """Start the record of an ask run and hook it into the run's events (None for dry runs or
    when the store is unusable). With ``opts.resume``, checks that the recorded run asked the same
    question about the same corpus (UsageError otherwise)."""
    if getattr(opts, "dry_run", False):
        return None
    resumed_from = None
    try:
        store = RunStore()
    except (OSError, sqlite3.Error) as e:
        if getattr(opts, "resume", None):
            raise UsageError(f"cannot open the run records to resume: {e}") from None
        _warn(f"run records unavailable ({e}); this run is not recorded")
        return None
    if getattr(opts, "resume", None):
        resumed_from = store.resolve(opts.resume)
        old = store.get(resumed_from)
        o = old.get("options") or {}
        here = path if path == "-" else os.path.abspath(path)
        if old.get("question") != question or (o.get("path_abs") and o["path_abs"] != here):
            raise UsageError(f"run {resumed_from} asked {old.get('question')!r} about "
                             f"{o.get('path_abs') or old.get('corpus')}; --resume re-runs the same "
                             "question on the same corpus")
    secrets = secret_values([getattr(opts, "api_key", None)])
    argv = getattr(opts, "argv", None)
    if argv:
        argv = redact_argv(list(argv), secrets)
        command = "rlm " + " ".join(_quote(a) for a in argv)
    else:
        argv = []
        command = f"{opts.command} {_quote(path)} {_quote(question)}"
    try:
        rec = store.start(run.run_id, command=command, argv=argv, options=_options(opts, path),
                          corpus=path, question=question, resumed_from=resumed_from,
                          secrets=secrets)
    except Exception as e:  # noqa: BLE001 - never fail a run for its record
        _warn(f"run records unavailable ({e}); this run is not recorded")
        return None
    if resumed_from:
        rec.event("resume", {"from": resumed_from})
    run.emit = rec.wrap(run.emit)
    return rec


def _quote(s: str) -> str:
    import shlex

    return shlex.quote(s)
