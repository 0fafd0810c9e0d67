"""A key=value whose value is a key word, or a dotted reference to one, is code, not a secret
(`password = password`, `password: creds.password`): read as a secret, the word was then taken
wherever it recurred, all through the code and in the user's own question. Literal values,
weak ones too, are still secrets."""

from __future__ import annotations

import pytest

from rlm.redact.detect import PLACEHOLDER, detect
from rlm.redact.redactor import Redactor

CODE = [
    "def login(user, password=password):",
    "    creds = {'user': user, password: creds.password}",
    "pwd=self.pwd",
    "password = settings.db_password",
    "client_secret = client_secret",
    "secret_key = SECRET_KEY",
    "headers = {token: this.token, api_key: os.environ.api_key}",
    "docs: https://user:password@example.invalid/db",
]
LITERALS = {
    "password=hunter2xyz": "hunter2xyz",
    "password: supersecret": "supersecret",
    "password=letmein": "letmein",
    "pwd = Password123": "Password123",
    "client_secret=kX9q2LmZ": "kX9q2LmZ",
    "api_key: my.api.key.v2": "my.api.key.v2",
    "dsn postgres://app:sekrit@db.invalid/x": "sekrit",
}


@pytest.mark.parametrize("line", CODE)
def test_a_reference_to_a_key_word_is_no_secret(line):
    assert [h for h in detect(line) if h.kind == "SECRET"] == []


@pytest.mark.parametrize("line,value", LITERALS.items())
def test_a_literal_value_is_still_a_secret(line, value):
    assert value in {h.value for h in detect(line) if h.kind == "SECRET"}


def test_the_word_password_is_not_masked_in_later_prompts_and_the_question():
    r = Redactor()
    r.redact("\n".join(CODE))
    question = r.redact("Question: where is the password hashed, and is the token rotated?")
    assert question == "Question: where is the password hashed, and is the token rotated?"
    sent = r.redact("password=hunter2xyz\nlater: hunter2xyz")
    assert "hunter2xyz" not in sent and len(set(PLACEHOLDER.findall(sent))) == 1 and \
        sent.count("⟨SECRET_") == 2
