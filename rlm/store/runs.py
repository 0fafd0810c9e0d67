"""Run records (``<user data dir>/runs.sqlite3``): one row per run plus its append-only events.

Table ``runs``: the command, argv without secrets, options, corpus, strategy, status, coverage,
tokens and the final JSON report; table ``events``: appended as the run goes (gate, plan, one row
per finished chunk or job with its findings, reduce notes, the final report). The schema comes
from ``rlm.store.migrations.runs_migrations``. Every write is its own transaction (autocommit)
in WAL mode, so a run killed with SIGKILL loses only the calls in flight.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from rlm.errors import UsageError
from rlm.store import run_lock
from rlm.store.db import connect, data_dir, warn
from rlm.store.migrations import runs_migrations
from rlm.redact.record_mask import apply, typed_masks
from rlm.store.secrets import dumps, redact_argv, redact_url, scrub, secret_values

# events written to the run record (progress-only events such as "start" are not)
RECORDED_EVENTS = {"gate", "plan", "chunk", "reduce", "report", "resume", "rejected"}

_RUN_COLS = ("id", "created", "finished", "command", "argv", "options", "corpus", "question",
             "strategy", "status", "complete", "chunks_total", "chunks_ok", "chunks_failed",
             "tokens", "calls", "cached_calls", "resumed_from", "pid", "error", "report", "stopped")


from rlm.errors import RunsUnreadable  # noqa: E402,F401 - raised here, defined with the others


class RunStore:
    """The run history: one row per run plus its append-only events."""

    def __init__(self, path: Path | None = None):
        self.path = path or data_dir() / "runs.sqlite3"
        self._lock = threading.Lock()
        try:
            self._con = connect(self.path, runs_migrations)
        except sqlite3.DatabaseError as e:  # a damaged or foreign file: one line, exit 2
            raise RunsUnreadable(f"the run records {self.path} cannot be read ({e}): move the "
                                 "file away or delete it, and rlm starts a new one") from None

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
              secrets: list[str] | None = None, masks: list[tuple[str, str]] = ()) -> Recorder:
        """``masks``: (value, placeholder) pairs replaced in everything this run stores."""
        secrets = secret_values() if secrets is None else secrets
        m = list(masks)
        with self._lock:
            self._con.execute(
                "INSERT INTO runs (id, created, command, argv, options, corpus, question, status, "
                "resumed_from, pid) VALUES (?, ?, ?, ?, ?, ?, ?, 'running', ?, ?)",
                (run_id, time.time(), scrub(command, secrets, m), dumps(argv, secrets, m),
                 dumps(options, secrets, m), scrub(corpus, secrets, m),
                 scrub(question, secrets, m), resumed_from, os.getpid()))
        return Recorder(self, run_id, secrets, m)


def run_history() -> RunStore:
    """The run history as every reader opens it (the CLI's runs/show/resume, the MCP server's
    runs/show/resume tools): the runs database in the data folder (RLM_DATA_DIR)."""
    return RunStore()


def when(ts: float | None) -> str:
    """A run's time as runs and show print it (local time, to the second; "" when unknown)."""
    import datetime as dt

    return dt.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M:%S") if ts else ""


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

    def __init__(self, store: RunStore, run_id: str, secrets: list[str],
                 masks: list[tuple[str, str]] | None = None):
        self.store, self.run_id, self.secrets = store, run_id, secrets
        self.masks = masks or []  # what the user typed, when the run redacts
        self.mask: Callable[[Any], Any] | None = None  # --redact-report: the run's Redactor
        self.seq = 0
        self.broken = False
        self._lock = threading.Lock()
        self.resume_lock: run_lock.RunLock | None = None  # held while this run resumes another

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
                                         dumps(self._masked(data), self.secrets,
                                               self.masks)))
                if kind == "gate":
                    self.store._con.execute("UPDATE runs SET strategy = ? WHERE id = ?",
                                            (data.get("strategy"), self.run_id))
        except Exception as e:  # noqa: BLE001 - never fail a run for its record
            self.broken = True
            warn(f"run record stopped ({e})")

    def _masked(self, data: Any) -> Any:
        if self.mask is None:
            return data
        return self.mask(orjson.loads(dumps(data, [])))

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
                stopped = (rep.get("audit") or {}).get("stopped")  # audit's rounds (own field)
                status = "done" if cov["complete"] else "incomplete"
                if cov.get("interrupted"):
                    status = "interrupted"
                self.store.execute(
                    "UPDATE runs SET finished = ?, status = ?, strategy = ?, complete = ?, "
                    "chunks_total = ?, chunks_ok = ?, chunks_failed = ?, tokens = ?, calls = ?, "
                    "cached_calls = ?, report = ?, stopped = ? WHERE id = ?",
                    (time.time(), status, rep["strategy"], int(bool(cov["complete"])),
                     cov["chunks_total"], cov["chunks_ok"],
                     len({f["chunk"] for f in cov["chunks_failed"]}),  # one chunk, several files
                     u["prompt_tokens"] + u["completion_tokens"], u["calls"], u["cached_calls"],
                     dumps(self._masked(rep), self.secrets, self.masks), stopped,
                     self.run_id))
            else:
                while isinstance(error, BaseExceptionGroup) and error.exceptions:
                    error = error.exceptions[0]
                msg = f"{type(error).__name__}: {error}" if error is not None else "ended without a report"
                if isinstance(error, (KeyboardInterrupt,)):
                    msg = "interrupted"
                self.store.execute("UPDATE runs SET finished = ?, status = 'error', error = ? "
                                   "WHERE id = ?", (time.time(),
                                                    scrub(msg, self.secrets, self.masks)[:500],
                                                    self.run_id))
        except Exception as e:  # noqa: BLE001 - never fail a run for its record
            warn(f"could not write the run record ({e})")
        finally:
            self.broken = True  # closed: nothing more is written
            if self.resume_lock is not None:
                self.resume_lock.release()
            try:
                self.store.close()
            except sqlite3.Error:
                pass


# ----------------------------------------------------------------------------------- api hooks

def _options(opts, path: str) -> dict:
    """AskOptions as stored: no key; effective model/base URL (env included), URL redacted."""
    from dataclasses import asdict

    d = {k: v for k, v in asdict(opts).items() if k not in ("api_key", "resume", "argv", "confirm")}
    d["model"] = opts.model or os.environ.get("RLM_MODEL") or None
    d["base_url"] = redact_url(opts.base_url or os.environ.get("RLM_BASE_URL") or None)
    d["path_abs"] = path if path == "-" else os.path.abspath(path)
    return d


def record_run(run, path: str, question: str, opts) -> Recorder | None:
    """Start the record of a run (ask, audit, mine) and hook it into the run's events (None for
    dry runs or when the store is unusable). With ``opts.resume``, checks that the recorded run
    asked the same question about the same corpus (UsageError otherwise)."""
    if getattr(opts, "dry_run", False):
        return None
    resumed_from = lock = None
    try:
        store = RunStore()
    except (OSError, sqlite3.Error, RunsUnreadable) as e:
        if getattr(opts, "resume", None):
            raise UsageError(f"cannot open the run records to resume: {e}") from None
        warn(f"run records unavailable ({e}); this run is not recorded")
        return None
    if getattr(opts, "resume", None):
        resumed_from = store.resolve(opts.resume)
        old = store.get(resumed_from)
        o = old.get("options") or {}
        here = path if path == "-" else os.path.abspath(path)
        keys = secret_values([getattr(opts, "api_key", None)])  # the question as it is stored
        stored = {question, scrub(question, keys), scrub(question, keys, typed_masks(question, []))}
        if old.get("question") not in stored or (o.get("path_abs") and o["path_abs"] != here):
            raise UsageError(f"run {resumed_from} asked {old.get('question')!r} about "
                             f"{o.get('path_abs') or old.get('corpus')}; --resume re-runs the same "
                             "question on the same corpus")
        lock = run_lock.take(resumed_from)  # a second resume of the same run stops here
    secrets = secret_values([getattr(opts, "api_key", None)])
    argv = getattr(opts, "argv", None)
    if argv:
        argv = redact_argv(list(argv), secrets)
        command = "rlm " + " ".join(_quote(a) for a in argv)
    else:
        argv = []
        command = f"{opts.command} {_quote(path)} {_quote(question)}"
    policy = getattr(run, "redaction", None)
    masks = typed_masks(question, argv) if policy is not None and policy.enabled else []
    options = _options(opts, path)
    if masks:
        options["question_masked"] = apply(question, masks) != question
    try:
        rec = store.start(run.run_id, command=command, argv=argv, options=options,
                          corpus=path, question=question, resumed_from=resumed_from,
                          secrets=secrets, masks=masks)
    except Exception as e:  # noqa: BLE001 - never fail a run for its record
        warn(f"run records unavailable ({e}); this run is not recorded")
        if lock is not None:
            lock.release()
        return None
    rec.resume_lock = lock
    if resumed_from:
        rec.event("resume", {"from": resumed_from})
    run.sink = rec.wrap(run.sink)
    return rec


def _quote(s: str) -> str:
    import shlex

    return shlex.quote(s)
