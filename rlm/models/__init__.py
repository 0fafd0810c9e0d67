from rlm.models.base import Completion, Limits, Model, Usage

__all__ = ["Completion", "Limits", "Model", "Usage"]
