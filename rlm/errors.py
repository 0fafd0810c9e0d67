"""Every error rlm raises to its callers, and the exit codes the CLI turns them into.

The CLI prints an error as one line (never a traceback) and exits with its ``exit_code``:
0 complete; 3 answered with incomplete coverage (or interrupted); 2 bad usage or input;
1 internal error. These constants are the only definition of the codes.
"""

EXIT_OK = 0  # the answer is complete (or a dry run, which promises nothing)
EXIT_INTERNAL = 1  # a bug: said in one line (RLM_DEBUG=1 shows the traceback)
EXIT_USAGE = 2  # bad usage or bad input
EXIT_INCOMPLETE = 3  # answered, but coverage is incomplete or code is not sure; or interrupted


class RlmError(Exception):
    """Base class: message is shown to the user as one line."""

    exit_code = EXIT_INTERNAL


class UsageError(RlmError):
    """Bad usage or bad input: exit 2."""

    exit_code = EXIT_USAGE


class ModelUnreachable(UsageError):
    """The model server cannot be reached at all (before any finding exists)."""


class ModelCallError(RlmError):
    """One model call failed for good (after retries). The chunk is recorded as failed."""

    # the endpoint could not be reached, or dropped the connection, on every attempt (not an
    # answer it gave): what the run's circuit breaker counts (rlm.engine.budget)
    unreachable = False

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class ContextTooLong(ModelCallError):
    """The server says the prompt does not fit the model's context: split the unit, retry."""


class BudgetExhausted(RlmError):
    """The shared budget (tokens, calls, wall time) ran out."""

    attempts = 0  # requests this call had already sent when the budget stopped it


class PathRefused(UsageError):
    """A path outside the allowed roots, or one that left them while it was being opened (never
    read)."""


class RunsUnreadable(UsageError):
    """The run records file exists but is not a database sqlite can read."""


class EvidenceError(ValueError):
    """An evidence path that cannot be accepted (outside the root, missing, a folder, ...)."""


class ScanInterrupted(Exception):
    """Ctrl-C arrived while code was scanning the corpus (the run then reports what it read)."""

    exit_code = EXIT_INCOMPLETE
