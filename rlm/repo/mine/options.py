"""Options of `rlm mine`: the shared run options (rlm.engine.options; each flag means the same on
every command) plus mine's own."""

from __future__ import annotations

from dataclasses import dataclass

from rlm.engine.options import RunOptions

ONE_CALL_MAX_FILES = 30


@dataclass
class MineOptions(RunOptions):
    """Options of :func:`rlm.repo.mine`: the shared run options and the mining's own."""

    command: str = "mine"
    usable_fraction: float = 0.5  # of the model context, for one call's candidate lines
    chunk_chars: int | None = None
    one_call_max_files: int = ONE_CALL_MAX_FILES
    summary: bool = False  # --summary: a paragraph from the verified findings (rlm.repo.summary)
    weak_model: bool | None = None  # None: the embedded model is weak (its claims are checked)
    questions: list[str] | None = None  # set by mine_async: the run record keeps them for resume
