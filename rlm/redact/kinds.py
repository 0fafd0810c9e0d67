"""What redaction replaces and how a replaced value is shown: its kinds, in the order the
statement names them, and the placeholder pattern (``⟨IP_4⟩``). A module of its own: the
detectors, the run's Redactor and its stores on disk (rlm.redact.spill) all read them."""

from __future__ import annotations

import re

KINDS = ("SECRET", "EMAIL", "CARD", "IBAN", "SSN", "PHONE", "IP")
KIND_WORDS = {"SECRET": "secrets", "EMAIL": "e-mails", "CARD": "card numbers", "IBAN": "IBANs",
              "SSN": "social security numbers", "PHONE": "phone numbers", "IP": "IP addresses"}
PLACEHOLDER = re.compile(r"⟨(SECRET|EMAIL|CARD|IBAN|SSN|PHONE|IP)_(\d+)⟩")
