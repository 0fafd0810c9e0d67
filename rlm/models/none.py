"""The `none` tier: no model at all. Code finds, counts, groups and words the answer.

This is what runs when nothing is configured. It satisfies the Model protocol so that the
pipeline needs no special case to size windows or estimate; a call to it is a bug upstream
(strategies check `is_code_only` first) and fails with a clear reason rather than silently.
"""

from __future__ import annotations

import math

from rlm.errors import ModelCallError
from rlm.models.base import Completion, Limits
from rlm.models.profile import ModelProfile

NOTICE = ("no model configured: code found and wrote this answer; add --model/--base-url, "
          "or install rlm[local], for model-read answers")


class CodeOnlyModel:
    name = "none"

    def __init__(self, context_tokens: int = 8192):
        self.context_tokens = context_tokens  # the window code-only passages are cut to
        self.profile = ModelProfile(tier="none", context_tokens=context_tokens,
                                    speed_source="no model")

    def count_tokens(self, text: str) -> int:
        return math.ceil(len(text) / 4)

    async def complete(self, messages, schema, limits: Limits, schema_name: str = "result") -> Completion:
        raise ModelCallError("no model configured (code only)")

    async def aclose(self) -> None:
        return None

    def describe(self) -> str:
        return "none (code only)"

    def __repr__(self) -> str:
        return "CodeOnlyModel()"
