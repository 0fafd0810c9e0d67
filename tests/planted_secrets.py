"""Planted secrets and personal data: one value of each kind, shaped like the real thing (made
up, from a seeded generator), to be found in keyed log lines and in prose with no keyword near.

`KINDS`: name -> (value, key for the keyed line). A value counts as redacted when no piece of
it longer than 8 characters is left in the redacted text (for a JWT: its signature).
"""

from __future__ import annotations

import base64
import random
import string

_R = random.Random(21)
B62 = string.ascii_letters + string.digits
B64 = B62 + "+/"
URLSAFE = B62 + "-_"
HEX = "0123456789abcdef"


def _s(alphabet: str, n: int) -> str:
    return "".join(_R.choice(alphabet) for _ in range(n))


def _jwt() -> str:
    head = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
    body = base64.urlsafe_b64encode(b'{"sub":"u-1842","exp":1900000000}').decode().rstrip("=")
    return f"{head}.{body}.{_s(URLSAFE, 43)}"


def _basic() -> str:
    return base64.b64encode(f"svc-deploy:{_s(B62, 18)}".encode()).decode()


KINDS: dict[str, tuple[str, str]] = {
    "openai": (f"sk-proj-{_s(URLSAFE, 58)}T3BlbkFJ{_s(URLSAFE, 58)}", "OPENAI_API_KEY"),
    "anthropic": (f"sk-ant-api03-{_s(URLSAFE, 93)}AA", "ANTHROPIC_API_KEY"),
    "aws-key-id": ("AKIA" + _s(string.ascii_uppercase + "234567", 16), "aws_access_key_id"),
    "aws-secret": (_s(B64, 40), "aws_secret_access_key"),
    "github-pat-fine": (f"github_pat_{_s(B62, 22)}_{_s(B62, 59)}", "GH_TOKEN"),
    "github-classic": (f"ghp_{_s(B62, 36)}", "github_token"),
    "gitlab": (f"glpat-{_s(URLSAFE, 20)}", "GITLAB_TOKEN"),
    "google-api": (f"AIza{_s(URLSAFE, 35)}", "google_api_key"),
    "jwt": (_jwt(), "session"),
    "slack-bot": (f"xoxb-{_s(string.digits, 12)}-{_s(string.digits, 13)}-{_s(B62, 24)}",
                  "SLACK_TOKEN"),
    "stripe": (f"sk_live_{_s(B62, 24)}", "stripe_key"),
    "ssn": ("512-48-3921", "ssn"),
    "private-key-line": (_s(B64, 64), "key_line"),
    "azure-storage": (_s(B64, 86) + "==", "AccountKey"),
    "npm": (f"npm_{_s(B62, 36)}", "NPM_TOKEN"),
    "django": ("".join(_R.choice("abcdefghijklmnopqrstuvwxyz0123456789!@#$%^*(-_+)")
                       for _ in range(50)), "DJANGO_SECRET_KEY"),
    "bearer": (_s(B62, 40), "Authorization: Bearer"),
    "basic": (_basic(), "Authorization: Basic"),
    "twilio": ("SK" + _s(HEX, 32), "TWILIO_API_KEY"),
    "sendgrid": (f"SG.{_s(URLSAFE, 22)}.{_s(URLSAFE, 43)}", "SENDGRID_API_KEY"),
    "huggingface": (f"hf_{_s(string.ascii_letters, 34)}", "HF_TOKEN"),
    "pypi": ("pypi-AgEIcHlwaS5vcmc" + _s(URLSAFE, 60), "TWINE_PASSWORD"),
    "digitalocean": (f"dop_v1_{_s(HEX, 64)}", "DIGITALOCEAN_TOKEN"),
    "shopify": (f"shpat_{_s(HEX, 32)}", "SHOPIFY_TOKEN"),
    "mailgun": (f"key-{_s(HEX, 32)}", "MAILGUN_API_KEY"),
    "telegram": (f"{_s(string.digits, 10)}:AA{_s(URLSAFE, 33)}", "TELEGRAM_BOT_TOKEN"),
    "square": (f"sq0atp-{_s(URLSAFE, 22)}", "SQUARE_ACCESS_TOKEN"),
    "url-password": (_s(B62, 14), "dsn"),
    "email": ("jane.doe@acme-corp.com", "email"),
    "card": ("4111 1111 1111 1111", "card"),
    "iban": ("DE89 3704 0044 0532 0130 00", "iban"),
    "phone": ("+44 20 7946 0958", "phone"),
    "ipv4": ("203.0.113.77", "client_ip"),
}


def keyed_line(kind: str, n: int = 1) -> str:
    """A log line that names what the value is."""
    value, key = KINDS[kind]
    if kind == "url-password":
        return f"2026-03-01 12:00:{n:02d} INFO db {key}=postgres://svc:{value}@db.internal:5432/app"
    if key.startswith("Authorization"):
        return f"2026-03-01 12:00:{n:02d} DEBUG http request header {key} {value}"
    return f"2026-03-01 12:00:{n:02d} INFO config {key}={value}"


PROSE = ["I pasted {} into the chat by mistake yesterday.",
         "The string {} was in the screenshot we shared.",
         "Could you check whether {} still works for the nightly job?"]


def prose_line(kind: str, n: int = 0) -> str:
    """A sentence with no keyword that says what the value is."""
    value = KINDS[kind][0]
    if kind == "url-password":
        value = f"postgres://svc:{value}@db.internal:5432/app"
    return PROSE[n % len(PROSE)].format(value)


def leaked(kind: str, redacted: str) -> bool:
    """True when a piece of the value is left in the redacted text (a JWT: its signature)."""
    value = KINDS[kind][0]
    if kind == "jwt":
        return value.rsplit(".", 1)[1] in redacted
    pieces = [p for p in value.replace(" ", "-").split("-") if len(p) >= 8] or [value]
    return any(p in redacted for p in pieces)
