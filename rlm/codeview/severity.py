"""Severity and confidence of an analyzer finding, from the rule's origin (recipes/
analyzer-rules.toml): bandit's own levels for ruff's S rules, a per-family rating for the
correctness rules. Nothing here reads the names in the code."""

from __future__ import annotations

import tomllib
from functools import lru_cache
from importlib import resources

LOWER = {"HIGH": "MEDIUM", "MEDIUM": "LOW", "LOW": "LOW"}


@lru_cache(maxsize=1)
def rules() -> dict:
    text = resources.files("rlm.recipes").joinpath("analyzer-rules.toml").read_text("utf-8")
    return tomllib.loads(text)


def rate(code: str, message: str) -> tuple[str, str, str, str]:
    """(severity, confidence, basis, kind) of a ruff finding; severity is lowercase and one level
    lower than the origin's when the origin's confidence is LOW."""
    r = rules()
    if code in r["bandit"]:
        bid, sev, conf = r["bandit"][code]
        for w in r.get("bandit_when", []):
            if w["code"] == code and w["message_has"] in message:
                sev = w["severity"]
        basis = f"bandit {bid}: severity {sev}, confidence {conf}"
        return _shown(sev, conf), conf.lower(), basis, "security"
    if code.startswith("S"):
        return "low", "low", f"{code}: a bandit rule rlm has no level for (rated low)", "security"
    for key in sorted(r["correctness"], key=len, reverse=True):  # the most specific code first
        if code.startswith(key):
            sev, conf, why = r["correctness"][key]
            return _shown(sev, conf), conf.lower(), f"rlm's rating of {key}: {why}", "correctness"
    return "low", "low", f"{code}: not rated by rlm (shown low)", "correctness"


def _shown(sev: str, conf: str) -> str:
    return (LOWER[sev] if conf == "LOW" else sev).lower()


def selected() -> tuple[list[str], list[str]]:
    r = rules()["ruff"]
    return list(r["select"]), list(r["ignore"])
