"""How a unit of work (a chunk of `ask`, a job of `audit` or `mine`) ended.

The status is what code branches on; the reason is only for people (it is shown in the
coverage statement and the report). No code may parse a reason to learn what happened.
"""

from __future__ import annotations

from enum import Enum


class Status(str, Enum):
    OK = "ok"  # the call answered and its output validated
    FAILED = "failed"  # the call was made and failed for good (retries, invalid output, HTTP)
    NOT_RUN = "not_run"  # never called: the budget was spent or the server went away
    INTERRUPTED = "interrupted"  # Ctrl-C: in flight or never started when the user stopped

    @property
    def ran_and_failed(self) -> bool:
        """A call that was made and failed (worth retrying); not one the budget stopped."""
        return self is Status.FAILED
