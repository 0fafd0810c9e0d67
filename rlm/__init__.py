"""rlm: answer questions about corpora far larger than a model's context window."""

__version__ = "0.1.0"
