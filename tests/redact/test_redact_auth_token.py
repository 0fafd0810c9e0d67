"""A bearer, basic or `token` value is a secret when it holds a digit or is 24 characters
long: words after those words ("token expired", "Basic realm") are not."""

from __future__ import annotations

import pytest

from rlm.redact.detect import detect


@pytest.mark.parametrize("value,secret", [
    ("abcdefgh1", True),  # a digit: short is enough
    ("x" * 8 + "7", True),
    ("abcdefghijklmnopqrstuvw", False),  # 23 letters
    ("abcdefghijklmnopqrstuvwx", True),  # 24
    ("expiredxx", False),
])
def test_a_token_after_bearer(value, secret):
    hits = [h for h in detect(f"GET /a Authorization: Bearer {value} ok\n") if h.kind == "SECRET"]
    assert [h.value for h in hits] == ([value] if secret else [])
