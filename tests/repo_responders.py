"""Scripted "models" for the repository recipes: they read the numbered material in the user
message (module chunks "### path (lines a-b of n)" + "  12| code", or candidate lines
"== path ==" + "[n] text") and answer from it, like a competent model would, or badly on
purpose. Used with rlm/testing/fake_server.py (`server.on(schema_name, fn)`)."""

from __future__ import annotations

import re

HEAD = re.compile(r"^### (\S.*?) \(lines (\d+)-(\d+) of (\d+)\)$")
ROW = re.compile(r"^\s*(\d+)\| ?(.*)$")
CHEAD = re.compile(r"^== (.+) ==$")
CROW = re.compile(r"^\[(\d+)\] ?(.*)$")

CONST = re.compile(r"^\s*[A-Z][A-Z0-9_]{3,}\s*(?::[^=]+)?=(?!=)")
DEF = re.compile(r"^\s*(?:async\s+)?(?:def|class)\s+([A-Za-z_]\w*)")
RISKS = [
    (re.compile(r"hashlib\.(?:sha1|md5)\("), "high", "weak password hash"),
    (re.compile(r"\[:\s*\d+\]"), "medium", "silently truncates text"),
    (re.compile(r"min\(\w+, [A-Z_]+\)"), "low", "clamps the requested value"),
    (re.compile(r"TokenBucket\(capacity=\d+"), "low", "hard-coded client-side rate limit"),
    (re.compile(r"verify\s*=\s*False|except Exception:\s*$"), "medium", "risky pattern"),
]


def module_rows(text: str) -> list[tuple[str, list[tuple[int, str]]]]:
    """[(path, [(line number, text), ...]), ...] from a module chunk."""
    out: list[tuple[str, list[tuple[int, str]]]] = []
    for line in text.split("\n"):
        m = HEAD.match(line)
        if m:
            out.append((m.group(1), []))
            continue
        r = ROW.match(line)
        if r and out:
            out[-1][1].append((int(r.group(1)), r.group(2)))
    return out


def candidate_rows(text: str) -> list[tuple[int, str, str]]:
    """[(n, path, text), ...] from candidate-line material."""
    out = []
    path = ""
    for line in text.split("\n"):
        m = CHEAD.match(line)
        if m:
            path = m.group(1)
            continue
        r = CROW.match(line)
        if r:
            out.append((int(r.group(1)), path, r.group(2)))
    return out


def field(text: str, name: str) -> str:
    for line in text.split("\n"):
        if line.startswith(name + ":"):
            return line[len(name) + 1:].strip()
    return ""


def good_module(req: dict, text: str) -> dict:
    """Constants as facts, risky patterns as risks, digits in Markdown as (doc) facts; every
    citation is path:n-n with the line's exact text as the quote."""
    facts, risks, apis = [], [], []
    files = module_rows(text)
    for path, rows in files:
        for n, line in rows:
            q = line.strip()
            m = DEF.match(line)
            if m and len(apis) < 5:
                apis.append(m.group(1))
            if CONST.match(line) and len(facts) < 3:
                facts.append({"claim": f"{path} sets {q[:120]}", "evidence_path": f"{path}:{n}-{n}",
                              "quote": q[:150]})
            elif path.endswith(".md") and re.search(r"\d", q) and len(facts) < 3 and len(q) > 20:
                facts.append({"claim": f"the docs say: {q[:120]}", "evidence_path": f"{path}:{n}",
                              "quote": q[:150]})
            for rx, sev, claim in RISKS:
                if rx.search(line) and len(risks) < 3:
                    risks.append({"claim": claim, "evidence_path": f"{path}:{n}-{n}",
                                  "quote": q[:150], "severity": sev})
                    break
    purpose = f"Code of {files[0][0]}" if files else "nothing"
    return {"purpose": purpose, "key_apis": apis + ["NoSuchApiAnywhere"], "facts": facts,
            "risks": risks}


def bad_module(req: dict, text: str) -> dict:
    """Citations that must all be rejected: out of the repository, absolute, a range past the
    end of the file, a quote that is not there, a file not shown."""
    files = module_rows(text)
    if not files:
        return {"purpose": "", "key_apis": [], "facts": [], "risks": []}
    path, rows = files[0]
    n, line = rows[0]
    shown = {p for p, _ in files}
    return {
        "purpose": "made up",
        "key_apis": [],
        "facts": [
            {"claim": "outside", "evidence_path": "../outside.py:1-2", "quote": "secret"},
            {"claim": "absolute", "evidence_path": "/etc/passwd:1", "quote": "root"},
            {"claim": "invented quote", "evidence_path": f"{path}:{n}-{n + 1}",
             "quote": "this text is in no file at all"},
        ],
        "risks": [
            {"claim": "past the end", "evidence_path": f"{path}:9000-9001",
             "quote": line.strip() or "x", "severity": "high"},
            {"claim": "no such file", "evidence_path": "nowhere/else.py:1-1", "quote": "x"},
            # a real file of the repository that this call was not shown
            {"claim": "not shown", "evidence_path": "README.md:1" if "README.md" not in shown
             else "docs/api.md:1", "quote": "# parcelpost" if "README.md" not in shown
             else "# HTTP API"},
        ],
    }


def good_pick(req: dict, text: str) -> dict:
    """Pick lists (structure/tests lenses, recheck): the first candidate lines that look like
    constants, test names or assertions; a recheck: the line sharing most words with the claim."""
    rows = candidate_rows(text)
    claim = field(text, "Claim")
    if claim:
        words = set(re.findall(r"[a-z]{4,}", claim.lower()))
        best = max(rows, key=lambda r: len(words & set(re.findall(r"[a-z]{4,}", r[2].lower()))),
                   default=None)
        return {"picks": [{"n": best[0], "claim": f"restated: {best[2].strip()[:100]}"}]} if best else {"picks": []}
    picks = []
    for n, path, t in rows:
        if CONST.match(t) or t.strip().startswith(("def test", "assert")):
            picks.append({"n": n, "claim": f"{path}: {t.strip()[:100]}"})
        if len(picks) == 3:
            break
    return {"picks": picks}


def good_risk_pick(req: dict, text: str) -> dict:
    picks = []
    for n, path, t in candidate_rows(text):
        for rx, sev, claim in RISKS:
            if rx.search(t):
                picks.append({"n": n, "claim": claim, "severity": sev})
                break
        if len(picks) == 3:
            break
    return {"picks": picks}


def keyword_pick(req: dict, text: str) -> dict:
    """A generic answerer for mine: the first three candidate lines containing a word of the
    question (4+ letters)."""
    q = field(text, "Question").lower()
    words = [w for w in re.findall(r"[a-z]{4,}", q) if w not in
             {"what", "which", "does", "there", "that", "this", "with", "from", "many", "much"}]
    picks = []
    for n, path, t in candidate_rows(text):
        low = t.lower()
        if any(w[:5] in low for w in words):
            picks.append({"n": n, "claim": f"{path} mentions it: {t.strip()[:80]}"})
        if len(picks) == 3:
            break
    return {"picks": picks}


# --------------------------------------------------------------------------- mechanical checks


def _norm(s: str) -> str:
    return " ".join(s.split())


def assert_evidence(root, path: str, a: int, b: int, quote: str) -> None:
    """Independently of rlm.verify.evidence: the path resolves to a regular file inside root, lines
    a..b exist, and the quote (whitespace-normalised) is in them."""
    from pathlib import Path, PurePosixPath

    root = Path(root).resolve()
    assert path and not PurePosixPath(path).is_absolute() and ".." not in PurePosixPath(path).parts, path
    full = (root / path).resolve()
    assert full.is_relative_to(root) and full.is_file(), path
    lines = full.read_text(encoding="utf-8", errors="replace").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    assert 1 <= a <= b <= len(lines), (path, a, b, len(lines))
    assert _norm(quote), (path, a, b)
    assert _norm(quote) in _norm(" ".join(lines[a - 1:b])), (path, a, b, quote)
