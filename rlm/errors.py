"""Errors the CLI turns into one-line messages and exit codes (never tracebacks)."""


class RlmError(Exception):
    """Base class: message is shown to the user as one line."""

    exit_code = 1


class UsageError(RlmError):
    """Bad usage or bad input: exit 2."""

    exit_code = 2


class ModelUnreachable(UsageError):
    """The model server cannot be reached at all (before any finding exists)."""


class ModelCallError(RlmError):
    """One model call failed for good (after retries). The chunk is recorded as failed."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class ContextTooLong(ModelCallError):
    """The server says the prompt does not fit the model's context: split the unit, retry."""


class BudgetExhausted(RlmError):
    """The shared budget (tokens, calls, wall time) ran out."""

    attempts = 0  # requests this call had already sent when the budget stopped it

