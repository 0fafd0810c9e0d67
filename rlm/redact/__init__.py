"""Placeholders before anything leaves: secret and PII detection (`detect`), the model wrapper
that redacts prompts and restores answers (`model`), and the run record's mask (`record_mask`)."""
