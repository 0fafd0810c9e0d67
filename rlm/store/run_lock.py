"""One resume of a run at a time: a lock file per run id beside the run records.

Two `rlm resume RUN` at once would both call the model for the same failed chunks and spend
twice. The second one now stops before any call and says who holds the run. The lock is an
advisory `flock`, so a killed process (kill -9) releases it by dying.
"""

from __future__ import annotations

import fcntl
import os
import re

from rlm.errors import UsageError
from rlm.store.db import data_dir


class RunLock:
    """Held while a run resumes; released by :meth:`release` or by the process ending."""

    def __init__(self, fd: int):
        self._fd: int | None = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor drops the flock
            self._fd = None


def take(run_id: str) -> RunLock:
    """Lock ``run_id`` for resuming, or a UsageError naming the process that holds it."""
    folder = data_dir() / "locks"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / (re.sub(r"[^A-Za-z0-9_.-]", "_", run_id) + ".lock")
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "another process"
        os.close(fd)
        raise UsageError(f"run {run_id} is being resumed already (pid {holder}); wait for it "
                         "to end, then `rlm resume` again if it is still incomplete") from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, str(os.getpid()).encode(), 0)
    return RunLock(fd)
