"""Numbers and identifiers in a model's answer must come from what code verified.

A synthesis answer may only restate the verified findings; a direct or grep answer may only
restate the text the model was shown. Any number or identifier of the answer found in none of
those (nor in the question, nor in code's own notes and counts) is marked in the answer and
named in the coverage statement: the model's wording stays, but it never passes off an altered
number or an invented id as found, and it never changes code's numbers (those are in code's
parts of the answer, which no model writes).
"""

from __future__ import annotations

import re

from rlm.engine.reducer import numbers_and_ids, render

FLAG = "[unverified]"
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_NUMBERING = re.compile(r"^\s*\d+\| ?", re.M)  # "  12| text": a line's number is not its text
_LINE_REF = re.compile(r"\blines? \d+(?:\s*(?:-|–|to|and)\s*\d+)?", re.I)  # cites: checked apart


def _flat(text: str) -> str:
    return _THOUSANDS.sub("", text)


def _pattern(tok: str) -> re.Pattern:
    # digits may not run on ("14:02" is in "14:02:11", "12" is not in "123"); a word's
    # letters may not either ("R-7" is not in "ERR-7")
    left = r"(?<!\d)" if tok[0].isdigit() else r"(?<![A-Za-z0-9])"
    right = r"(?!\d)" if tok[-1].isdigit() else r"(?![A-Za-z0-9])"
    if tok.isdigit():  # "5 January" restates "2024-01-05"
        return re.compile(left + "0*" + re.escape(tok.lstrip("0") or "0") + right)
    return re.compile(left + re.escape(tok) + right, re.I)


def unsupported(answer: str, support: str) -> list[str]:
    """The answer's numbers and identifiers that the support text does not hold, in order."""
    flat = _flat(support)
    said = _LINE_REF.sub(" ", _flat(answer))
    out: list[str] = []
    for tok in sorted(numbers_and_ids(said), key=said.find):
        if not _pattern(tok).search(flat):
            out.append(tok)
    return out


def mark(answer: str, tokens: list[str]) -> str:
    """Each unsupported token followed by the flag, wherever it stands in the answer."""
    text = _flat(answer)
    for tok in sorted(tokens, key=len, reverse=True):
        text = _pattern(tok).sub(lambda m: f"{m.group(0)} {FLAG}", text)
    return text


def guard(res) -> list[str]:
    """Check ``res.model_answer`` (an rlm.pipeline.strategies.base.Result) against the verified findings,
    the text the model read (``res.shown``), the question and code's parts; mark what fails."""
    if not res.model_answer:
        return []
    verified = [f for f in res.findings if f.verified]
    # render(): exactly what a synthesis prompt shows ("[3] claim (path:a-b)"), then evidence
    shown = _NUMBERING.sub("", getattr(res, "shown", "") or "")
    support = "\n".join([res.q, shown, *res.answer_parts,
                         render(verified), *(f.evidence for f in verified)])
    bad = unsupported(res.model_answer, support)
    if bad:
        res.model_answer = mark(res.model_answer, bad)
        what = "the verified findings" if not getattr(res, "shown", "") else "the text it read"
        res.cov.declared.append(
            f"the model's answer holds {len(bad)} number(s) or identifier(s) that are not in "
            f"{what} ({', '.join(bad[:5])}{', …' if len(bad) > 5 else ''}): marked {FLAG} "
            "in the answer, not treated as found")
    return bad
