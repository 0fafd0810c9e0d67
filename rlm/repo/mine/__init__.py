"""`rlm mine REPO QUESTION...`: requirements mining with checked evidence.

Modules: ``options`` (MineOptions), ``keywords`` (question words, stems, synonyms from
recipes/mine-rules.toml), ``scope`` (code's keyword search, identifier hop, candidate lines, one
call or fan-out), ``run`` (the calls, the evidence check, run record, entry points), ``report``
(the Markdown is drawn by rlm.render.mine).
"""

from rlm.repo.mine.keywords import keywords, stem
from rlm.render.mine import mine_markdown  # drawn by rlm.render, re-exported here
from rlm.repo.mine.options import MineOptions
from rlm.repo.mine.run import mine, mine_async

__all__ = ["MineOptions", "keywords", "mine", "mine_async", "mine_markdown", "stem"]
