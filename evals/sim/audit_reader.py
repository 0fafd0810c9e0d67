"""Answers for `rlm audit`'s sub-calls from a repository key (the oracle, and the noisy
reader's damage on module citations). Module chunks: "### path (lines a-b of n)" then
"  12| code"; candidate lines: "== path ==" then "[n] text"."""

from __future__ import annotations

import random
import re

from evals.sim.key import QuestionKey

HEAD = re.compile(r"^### (\S.*?) \(lines (\d+)-(\d+) of (\d+)\)$")
ROW = re.compile(r"^\s*(\d+)\| ?(.*)$")


def module_rows(text: str) -> list[tuple[str, int, str]]:
    out, path = [], None
    for line in text.split("\n"):
        m = HEAD.match(line)
        if m:
            path = m.group(1)
            continue
        r = ROW.match(line)
        if r and path:
            out.append((path, int(r.group(1)), r.group(2)))
    return out


def module_result(text: str, qk: QuestionKey | None) -> dict:
    """Every key fact shown in the module, cited at its line with its exact text."""
    cited = []
    for path, n, t in module_rows(text):
        for it in (qk.items if qk else []):
            if it.match in t and (it.label is None or it.label == path):
                cited.append({"claim": it.claim[:155], "evidence_path": f"{path}:{n}-{n}",
                              "quote": it.match[:118]})
    paths = sorted({p for p, _, _ in module_rows(text)})
    return {"purpose": f"Code of {', '.join(paths)[:200] or 'this module'}", "key_apis": [],
            "facts": cited[:3], "risks": [{**c, "severity": "medium"} for c in cited[3:6]]}


def damage_module(out: dict, rng: random.Random, rates: dict, note, tag: str) -> dict:
    """Off-by-k evidence paths and invented quotes on the module's facts and risks."""
    for kind in ("facts", "risks"):
        for c in out[kind]:
            if rng.random() < rates["offby"]:
                path, _, rng_s = c["evidence_path"].rpartition(":")
                n = int(rng_s.split("-")[0])
                k = rng.choice([-1, 1]) * rng.randint(1, 10)
                note("offby_audit", true_line=n, k=k, path=path)
                c["evidence_path"] = f"{path}:{n + k}-{n + k}"
            elif rng.random() < rates["badquote"]:
                c["quote"] = f"invented words number {rng.randrange(10**6)}"
                c["claim"] = f"{c['claim'][:130]} ({tag})"
                note("badquote", path=c["evidence_path"])
    return out


def phrase_result(rows: list[tuple[int, str, str]], qk: QuestionKey | None) -> dict:
    claims = []
    for n, path, t in rows[:6]:
        it = next((i for i in (qk.items if qk else []) if i.match in t), None)
        claims.append({"n": n, "claim": (it.claim if it else f"this line of {path} sets a value")[:100]})
    return {"claims": claims}
