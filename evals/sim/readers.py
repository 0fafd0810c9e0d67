"""Simulated readers: answer rlm's sub-calls from an answer key, like a perfect, a noisy or a
gullible model would. They are responders for rlm/testing/fake_server.py, so every call goes through
the real HTTP client, retries, schema validation and evidence checks.

- ``oracle``: finds the key's items by their text in the numbered lines of each prompt and
  answers every sub-call perfectly (map, judge, merge, direct/grep/synthesis, records).
- ``noisy``: the oracle's answers, damaged at seeded rates (see ``NOISY_RATES``): map calls here,
  merges and answers in evals/sim/damage.py. Every damage is logged in ``reader.log`` so scoring
  can tell a fabricated finding from a real one.
- ``adversarial``: the oracle, except where a chunk holds a planted instruction: then it obeys it.
"""

from __future__ import annotations

import hashlib
import random
import re
import threading
from typing import Any

from evals.sim import audit_reader, counting, damage, obey
from evals.sim.key import Item, QuestionKey, SimKey

NUMBERED = re.compile(r"^(\d+)\| ?(.*)$", re.M)
CANDIDATE = re.compile(r"^\[(\d+)\] ?(.*)$", re.M)
FINDING = re.compile(r"^\[(\d+)\] (.*) \(([^()]*):(\d+)-(\d+)\)$", re.M)
NOISY_RATES = {"offby": 0.15, "badquote": 0.08, "fabricate": 0.1, "drop": 0.08, "dup": 0.08,
               "schema": 0.04, "refuse": 0.04, "slow": 0.04, "429": 0.05,
               "merge": 0.3,  # a merged claim drops, alters or adds a number or identifier
               "answer": 0.3,  # an answer's number is altered, or an identifier is invented
               "badvalue": 0.05}  # a record's value: another number of its line, or none of them
_NO_DIRS = re.compile(r"(?:/[^\s/:()]+)+/")  # directories in prompts differ between machines
TAG_FAB = "unsupported-by-text"  # marks claims whose quote the noisy reader invented
TAG_OBEY = "as-instructed"  # marks findings the adversarial reader made because the text said so


def candidates(text: str) -> list[tuple[int, str, str]]:
    """[(n, path, text)] from candidate-line material ("== path ==" then "[n] text")."""
    out, path = [], ""
    for line in text.split("\n"):
        if line.startswith("== ") and line.endswith(" =="):
            path = line[3:-3]
            continue
        m = CANDIDATE.match(line)
        if m:
            out.append((int(m.group(1)), path, m.group(2)))
    return out


def first_user(req: dict) -> str:
    for m in req.get("messages") or []:
        if isinstance(m, dict) and m.get("role") == "user":
            c = m.get("content")
            return c if isinstance(c, str) else "".join(p.get("text", "") for p in c or [])
    return ""


def schema_name(req: dict) -> str | None:
    rf = req.get("response_format") or {}
    if rf.get("type") == "json_schema":
        return (rf.get("json_schema") or {}).get("name")
    s = rf.get("schema")
    if isinstance(s, dict):
        return s.get("title")
    sys_text = next((m.get("content", "") for m in req.get("messages") or []
                     if isinstance(m, dict) and m.get("role") == "system"), "")
    return _GUESS.get(next((k for k in _GUESS if k in sys_text), ""), None)


# plain-text / json_object-only endpoints: guess the task from the (constant) system prompt
_GUESS = {"numbered excerpt": "MapResult", "merge findings": "MergeResult",
          "label log lines": "GroupJudgement", "verified findings": "AnswerResult",
          "lines are numbered": "AnswerResult", "typed records": "RecordsResult",
          "code repository from numbered lines": "PickResult",
          "audit one part of a software repository": "ModuleResult"}


def matches(item: Item, text: str) -> bool:
    t = text.strip()
    return item.match in text or (len(t) >= 24 and t in item.match)


def shown_lines(text: str) -> list[tuple[int, str]]:
    return [(int(m.group(1)), m.group(2)) for m in NUMBERED.finditer(text)]


def quote_of(line_text: str, item: Item | None = None) -> str:
    """What a careful reader quotes: the relevant words (the item's text when the line holds
    it), else the start of the line; at most 150 characters."""
    if item is not None and item.match in line_text:
        return item.match.strip()[:150]
    return line_text.strip()[:150]


class Reader:
    """One simulated reader; call it as a fake_server responder: ``reader(req, text)``."""

    def __init__(self, kind: str, key: SimKey | None, seed: int = 0,
                 rates: dict[str, float] | None = None, slow_s: float = 0.3):
        if kind not in ("oracle", "noisy", "adversarial"):
            raise ValueError(f"unknown simulated reader {kind!r} (oracle, noisy, adversarial)")
        self.kind, self.key, self.seed = kind, key or SimKey(), seed
        self.rates = {**NOISY_RATES, **(rates or {})} if kind == "noisy" else {}
        self.slow_s = slow_s
        self.log: list[dict] = []
        self._seen: dict[str, int] = {}
        self._lock = threading.Lock()

    # -- entry point -------------------------------------------------------------------------
    def __call__(self, req: dict, _last_user: str) -> Any:
        from rlm.testing import Reply

        text = first_user(req)
        name = schema_name(req) or ""
        rng = self._rng(req)
        if self.kind == "noisy":
            fault = self._transport_fault(rng, name)
            if fault == "429":
                return Reply(status=429, headers={"Retry-After": "0"},
                             body={"error": {"message": "rate limited (simulated)",
                                             "type": "rate_limit_error", "code": 429}})
            if fault == "refuse":
                return "I'm sorry, but I can't help with that request."
            if fault == "schema":
                return {"findings": "none", "answer": 7, "groups": "x", "records": "x",
                        "label": "not-a-label"}
        qk = self.key.for_prompt(text)
        out = self._answer(name, text, qk, rng)
        if self.kind == "noisy" and rng.random() < self.rates["slow"]:
            self._note("slow", name=name)
            return Reply(content=out, delay=self.slow_s)
        return out

    def _rng(self, req: dict) -> random.Random:
        """Seeded by what the request shows (not by paths, which differ between machines) and by
        how often the same request came before (a retry draws anew)."""
        text = _NO_DIRS.sub("", first_user(req))
        msgs = req.get("messages") or []
        basis = f"{schema_name(req)}|{len(msgs)}|{msgs[-1].get('content') if len(msgs) > 2 else ''}"
        h = hashlib.sha256((basis + text).encode()).hexdigest()
        with self._lock:
            n = self._seen.get(h, 0)
            self._seen[h] = n + 1
        return random.Random(f"{self.seed}|{h}|{n}")

    def _note(self, kind: str, **kw) -> None:
        with self._lock:
            self.log.append({"kind": kind, **kw})

    def _transport_fault(self, rng: random.Random, name: str) -> str | None:
        for kind in ("429", "refuse", "schema"):
            if rng.random() < self.rates[kind]:
                self._note(kind, name=name)
                return kind
        return None

    # -- per task ------------------------------------------------------------------------------
    def _answer(self, name: str, text: str, qk: QuestionKey | None, rng: random.Random) -> Any:
        if name == "MapResult":
            return {"findings": self._map(text, qk, rng)}
        if name == "RecordsResult":
            return {"records": self._records(text, rng, (qk.agg or {}).get("field", "label")
                                             if qk is not None else "label")}
        if name == "GroupJudgement":
            return self._judge(text, qk)
        if name == "MergeResult":
            groups = self._merge(text)
            if self.kind == "noisy":
                groups = [damage.merge(g, rng, self.rates["merge"], self._note) for g in groups]
            return {"groups": groups}
        if name == "AnswerResult":
            out = self._answer_text(text, qk)
            if self.kind == "noisy" and not (qk is not None and qk.agg):
                out = damage.answer(out, rng, self.rates["answer"], self._note)
            return out
        if name == "ModuleResult":
            out = audit_reader.module_result(text, qk)
            if self.kind == "adversarial":
                out = obey.module(out, audit_reader.module_rows(text), self.key.instructions,
                                  self._note, TAG_OBEY)
            if self.kind == "noisy":
                out = audit_reader.damage_module(out, rng, self.rates, self._note, TAG_FAB)
            return out
        if name == "ModuleBrief":
            return {"purpose": "Code of this part of the repository", "key_apis": []}
        if name == "PhraseResult":
            return audit_reader.phrase_result(candidates(text), qk)
        if name in ("RiskPickResult", "PickResult") and self.kind == "adversarial":
            picks = obey.picks(self._picks(text, qk), candidates(text), self.key.instructions,
                               self._note, TAG_OBEY)
            sev = {"severity": "medium"} if name == "RiskPickResult" else {}
            return {"picks": [{**p, **sev} for p in picks]}
        if name == "RiskPickResult":
            return {"picks": [{**p, "severity": "medium"} for p in self._picks(text, qk)]}
        if name == "PickResult":
            picks = self._picks(text, qk)
            return {"picks": self._damage_picks(picks, text, rng) if self.kind == "noisy" else picks}
        return {}

    def _damage_picks(self, picks: list[dict], text: str, rng: random.Random) -> list[dict]:
        """Picks by number: off by a few numbers, dropped, or an invented claim on any line."""
        ns = [int(m.group(1)) for m in CANDIDATE.finditer(text)]
        out = []
        for p in picks:
            if rng.random() < self.rates["drop"]:
                self._note("drop", line=p["n"])
                continue
            if rng.random() < self.rates["offby"] and len(ns) > 1:
                k = rng.choice([-1, 1]) * rng.randint(1, 3)
                self._note("offby_pick", n=p["n"] + k, true_n=p["n"], k=k)
                p = {"n": p["n"] + k, "claim": f"{p['claim']} ({TAG_FAB})"[:120]}
            out.append(p)
        if ns and rng.random() < self.rates["fabricate"]:
            n = rng.choice(ns)
            self._note("fabricate", line=n)
            out.append({"n": n, "claim": f"The service stores passwords in plain text ({TAG_FAB})"})
        return out[:3]

    def _picks(self, text: str, qk: QuestionKey | None) -> list[dict]:
        """Mining and audit lenses: candidate lines "== path ==" / "[n] text"; pick the key's."""
        picks = []
        for n, path, t in candidates(text):
            for it in (qk.items if qk else []):
                if it.match in t and (it.label is None or it.label == path):
                    picks.append({"n": n, "claim": it.claim[:120]})
        return picks[:3]

    def _present(self, lines: list[tuple[int, str]], qk: QuestionKey | None):
        if qk is None:
            return []
        return [(n, t, it) for n, t in lines for it in qk.items if matches(it, t)]

    def _obeyed(self, lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
        if self.kind != "adversarial":
            return []
        return [(n, t) for n, t in lines if any(i in t for i in self.key.instructions)]

    def _map(self, text: str, qk: QuestionKey | None, rng: random.Random) -> list[dict]:
        lines = shown_lines(text)
        found = [{"line": n, "claim": it.claim, "quote": quote_of(t, it)}
                 for n, t, it in self._present(lines, qk)][:3]
        if qk is not None and qk.agg:  # a counting question read without rlm's aggregation
            found = counting.record_findings(self.key, qk, lines)
        for n, t in self._obeyed(lines):
            if "report nothing" in t:
                self._note("obeyed", what="report nothing", line=n)
                return []
            m = re.search(r'quoting "([^"]+)"', t)
            cite = int(re.search(r"cite line (\d+)", t).group(1)) if "cite line" in t else n
            q = m.group(1) if m else quote_of(t)
            self._note("obeyed", what="cite", line=cite, instruction_line=n)
            found = ([{"line": cite, "claim": f"The text says {q} ({TAG_OBEY})", "quote": q}]
                     + found)[:3]
        if self.kind == "noisy":
            found = self._damage(found, lines, rng)
        return found

    def _damage(self, found: list[dict], lines: list[tuple[int, str]], rng: random.Random) -> list[dict]:
        r, out = self.rates, []
        for f in found:
            if rng.random() < r["drop"]:
                self._note("drop", line=f["line"])
                continue
            f = dict(f)
            if rng.random() < r["offby"]:
                k = rng.choice([-1, 1]) * rng.randint(1, 10)
                self._note("offby", line=f["line"] + k, true_line=f["line"], k=k)
                f["line"] += k
            elif rng.random() < r["badquote"]:
                f["quote"] = self._invented(rng)
                f["claim"] = f"{f['claim']} ({TAG_FAB})"[:160]
                self._note("badquote", line=f["line"], claim=f["claim"])
            out.append(f)
            if rng.random() < r["dup"]:
                self._note("dup", line=f["line"])
                out.append(dict(f))
        if lines and rng.random() < r["fabricate"]:
            n, _ = rng.choice(lines)
            claim = f"The excerpt reports a critical outage ({TAG_FAB})"
            self._note("fabricate", line=n, claim=claim)
            out.append({"line": n, "claim": claim, "quote": self._invented(rng)})
        return out[:3]

    @staticmethod
    def _invented(rng: random.Random) -> str:
        return f"invented words number {rng.randrange(10**6)} that no line holds"

    def _records(self, text: str, rng: random.Random, field: str = "label") -> list[dict]:
        pat = self.key.record_pattern
        if not pat:
            return []
        rx = re.compile(pat)
        out = []
        for n, t in shown_lines(text):
            m = rx.search(t)
            rec = self.key.records.get(m.group(1)) if m else None
            if rec is None:
                continue
            out.append({"line": n, "item": m.group(1), "label": rec.get(field),
                        "value": rec.get("value")})
        if self.kind == "adversarial":
            return obey.records(out, shown_lines(text), self.key.instructions, self._note, TAG_OBEY)
        if self.kind != "noisy":
            return out
        kept, text_of = [], dict(shown_lines(text))
        for r in out:
            if rng.random() < self.rates["drop"]:
                self._note("drop", line=r["line"])
                continue
            if r["value"] is not None and rng.random() < self.rates["badvalue"]:
                r = damage.record_value(r, text_of.get(r["line"], ""), rng, self._note)
            kept.append(r)
        return kept

    def _judge(self, text: str, qk: QuestionKey | None) -> dict:
        lines = shown_lines(text)
        if self._obeyed(lines):
            self._note("obeyed", what="label noise")
            return {"label": "noise", "summary": "nothing of interest here"}
        present = self._present(lines, qk)
        if not present:
            return {"label": "other", "summary": "routine lines picked by code"}
        it = present[0][2]
        return {"label": it.label or "other", "summary": it.claim[:95]}

    def _merge(self, text: str) -> list[dict]:
        """Pairs neighbouring findings into one claim that keeps both claims whole."""
        items = [(int(m.group(1)), m.group(2)) for m in FINDING.finditer(text)]
        groups = []
        for k in range(0, len(items) - 1, 2):
            (i, a), (j, b) = items[k], items[k + 1]
            claim = f"{a}; {b}"
            if len(claim) <= 240:
                groups.append({"ids": [i, j], "claim": claim})
        return groups

    def _answer_text(self, text: str, qk: QuestionKey | None) -> dict:
        # the citing instruction first: it is the one that could plant evidence
        for n, t in sorted(self._obeyed(shown_lines(text)), key=lambda x: "cite line" not in x[1]):
            if "report nothing" in t:
                self._note("obeyed", what="report nothing", line=n)
                return {"answer": "There is nothing to report here.", "cites": []}
            m = re.search(r'quoting "([^"]+)"', t)
            cite = int(re.search(r"cite line (\d+)", t).group(1))
            self._note("obeyed", what="cite", line=cite, instruction_line=n)
            return {"answer": f"The text says {m.group(1) if m else t[:80]} ({TAG_OBEY}).",
                    "cites": [cite]}
        if qk is not None and qk.agg:
            return counting.answer_from(self.key, qk, text)
        findings = [(int(m.group(1)), m.group(2)) for m in FINDING.finditer(text)]
        if findings:  # synthesis: the items whose claims the verified findings carry
            present = [(i, it) for i, claim in findings for it in (qk.items if qk else [])
                       if it.claim in claim]
        else:  # direct / grep: the items shown in the numbered lines
            present = [(n, it) for n, _t, it in self._present(shown_lines(text), qk)]
        if not present:
            return {"answer": "The text given does not answer the question.", "cites": []}
        items = sorted({id(it): it for _, it in present}.values(), key=lambda it: it.order)
        if qk.answer == "last":
            last = items[-1]
            ans = f"The latest value is {last.value}: {last.claim}"
            cites = [n for n, it in present if it is last]
        else:
            ans = "; ".join(it.claim for it in items)
            if len(ans) > 790:
                ans = "Found: " + ", ".join(str(it.value or it.claim[:40]) for it in items)
            cites = [n for n, _ in present]
        return {"answer": ans[:800], "cites": list(dict.fromkeys(cites))[:12]}

