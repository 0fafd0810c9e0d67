"""The question, read once into a typed query that the gate and every strategy read.

`read_query(question)` finds, in this order: the time window (rlm.corpus.timewindow; its text
is then taken out, so `Jun 11 2005` never becomes the search term `2005`), the anchors
(rlm.corpus.grep: quoted text, IPs, node ids, paths ... each whole), the kind of answer wanted
(count, top k, list, open, or read), the group-by slot ("which IP", "per component"), and the
predicate words (what is counted: "failed password attempts"). `Query.read_as()` is the one
line the answer shows, so a user sees at once when code misread the question.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rlm.corpus import literals as numbers
from rlm.corpus.grep import candidate_anchors, extract_anchors
from rlm.corpus.idents import blank
from rlm.corpus.literals import Literal
from rlm.corpus.predicate import lexicon
from rlm.corpus.slots import slot_name
from rlm.corpus.timewindow import Window, parse_window

_OPEN = re.compile(
    r"\b(anomal\w*|unusual|odd|strange|weird|suspicious|wrong|problems?|issues?|errors?|"
    r"fail\w*|incidents?|warnings?|security|interesting|notable|outliers?|happened|unexpected)\b",
    re.I)
_SLOT = r"(?P<slot>[a-z]+(?:\s+(?:address(?:es)?|ids?))?)"
_WHICH_MOST = re.compile(
    rf"\b(?:which|what)\s+{_SLOT}\s+(?:\w+\s+)?(?:had|has|have|got|gets|saw|sent|made|caused|"
    r"produced|generated|logged|triggered|with|did|reported)\s+(?:the\s+)?(?:most|highest "
    r"number of|largest number of|greatest number of|more)\s+(?P<what>.+)", re.I)
# "which IPs had more than 10 failed passwords?": a threshold on each group's count, which code
# applies to the exact groups ("fewer than" would need the values with none: not counted)
_WHICH_OVER = re.compile(
    rf"\b(?:which|what|how\s+many)\s+{_SLOT}\s+(?:\w+\s+)?(?:had|has|have|got|gets|saw|sent|"
    r"made|caused|produced|generated|logged|triggered|with|did|reported)\s+(?P<op>more\s+than|"
    r"over|above|at\s+least|fewer\s+than|less\s+than|at\s+most|under|below)\s+(?P<n>\d+)\s+"
    r"(?P<what>.+)", re.I)
OVER = {"more than": ">", "over": ">", "above": ">", "at least": ">="}
OVER_WORDS = {">": "more than", ">=": "at least"}
_TOP_K = re.compile(rf"\btop\s+(?P<k>\d+)?\s*{_SLOT}(?:\s+(?:by|with|for|of|in|having)\s+"
                    r"(?P<what>.+))?", re.I)
_MOST_COMMON = re.compile(r"(?:\b(?P<k>\d+)\s+)?\b(?:most\s+(?:common|frequent)|commonest|"
                          r"most\s+often\s+seen)\s+(?P<what>.+)", re.I)
_HOW_MANY = re.compile(r"\b(?:how\s+many|number\s+of|count(?:\s+of)?|total(?:\s+number\s+of)?)"
                       r"\s+(?P<what>.+)", re.I)
# "by uid=0" is a value to match, not a slot to group by
_PER = re.compile(rf"\b(?:per|by|for\s+each|each|grouped\s+by|broken\s+down\s+by)\s+{_SLOT}"
                  r"(?![\w=])", re.I)
# "cite every line that reports a failure", "list all lines reporting failures", "which lines
# report an error?", "failure lines": code's own rule (rlm.corpus.anomalies.reports_failure)
_FAILURE_LINES = re.compile(
    r"\b(?:lines?|entries|events|records|messages)\s+(?:that\s+|which\s+)?(?:reports?|reporting|"
    r"reported|shows?|showing|indicates?|indicating|signals?|describes?|describing)\s+"
    r"(?:an?\s+|any\s+|some\s+)?(?:failures?|errors?|faults?)\b"
    r"|\bfailure\s+(?:lines?|entries|events|messages)\b"
    r"|\b(?:list|cite|show|give)\s+(?:me\s+)?(?:all|every|each)\s+(?:the\s+)?failures?\b", re.I)
# words that name a kind of message: "which warning occurred the most?" groups by template
_MESSAGE_WORDS = {"warning", "warnings", "exception", "exceptions", "failure", "failures",
                  "problem", "problems", "issue", "issues", "alert", "alerts", "fault",
                  "faults", "line", "lines", "entry", "entries", "record", "records", "thing",
                  "things", "one"}


def _failure_rule(body: str) -> bool:
    """The question asks for code's failure rule: not when "failure" is one word of a phrase
    the question names ("authentication failure lines": those words are counted)."""
    m = _FAILURE_LINES.search(body)
    if not m:
        return False
    if not m.group(0).lower().startswith("failure"):
        return True
    before = re.findall(r"[A-Za-z][\w-]*", body[:m.start()])
    _, filler = lexicon()
    return not before or before[-1].lower() in filler


FAILURE_RULE = ("code's rule: a level of critical or worse, or failure words at a level of error "
                "or milder; not a caller's error such as `No such file or directory`")
# "lines mention BlockManager": after a verb that says a line holds text, a name as the log
# writes it (camelCase, dotted, hyphenated) is that text, however common: grep's count
_TEXT_VERB = re.compile(r"\b(?:mention(?:s|ed|ing)?|contain(?:s|ed|ing)?|says?|saying|"
                        r"includ(?:e|es|ed|ing))\s+(?P<text>[^\s?!,;]+)", re.I)
_LIST = re.compile(r"\b(?:list|cite|show|give)\s+(?:me\s+)?(?:all|every|each)\b", re.I)
LEVEL_WORDS = {"error": "error", "errors": "error", "err": "error", "fatal": "error",
               "critical": "error", "crit": "error", "warning": "warn", "warnings": "warn",
               "warn": "warn"}
ALL_WORDS = {"line", "lines", "entries", "entry", "records", "events", "log", "logs"}


@dataclass
class Query:
    text: str
    kind: str  # count | top | list | open | read
    anchors: list[str] = field(default_factory=list)
    window: Window | None = None
    words: list[str] = field(default_factory=list)  # the predicate's words (what is counted)
    group_by: str | None = None  # a slot of rlm.corpus.slots, or None
    top_k: int | None = None
    rest: str = ""  # the question without its window's text
    failures: bool = False  # the predicate is "reports a failure" (rlm.corpus.anomalies)
    literals: list[Literal] = field(default_factory=list)  # `status 404`: lines must hold each
    unsure: list[str] = field(default_factory=list)  # why code cannot tell what a number means
    over: tuple[str, int] | None = None  # (">" or ">=", n): groups whose count passes it

    @property
    def level(self) -> str | None:
        """"error" / "warn" when the predicate is a level ("how many errors?")."""
        got = {LEVEL_WORDS.get(w.lower()) for w in self.words if w.lower() not in ALL_WORDS}
        return got.pop() if len(got) == 1 and None not in got else None

    @property
    def counts(self) -> bool:
        """A counting question code can count: how many, which had the most, top k, list."""
        return self.kind in ("count", "top", "list") and bool(
            self.anchors or self.words or self.group_by or self.failures or self.literals
            or self.unsure)

    @property
    def about_logs(self) -> bool:
        """A question about a log as a log (what stands out, how many, which, when): in a
        folder, answered from the log files only (rlm.corpus.open.focus_logs)."""
        return self.kind in ("open", "count", "top", "list") or self.window is not None

    @property
    def content_words(self) -> list[str]:
        """The predicate's words less those that only say "lines" (`lines`, `entries`)."""
        return [w for w in self.words if w.lower() not in ALL_WORDS]

    @property
    def every_line(self) -> bool:
        return not (self.anchors or self.failures or self.literals or self.content_words)

    def scope(self, files: int = 1) -> str:
        where = "whole file" if files <= 1 else f"all {files} files"
        return f"{self.window.label} ({where})" if self.window and files > 1 else (
            self.window.label if self.window else where)

    def read_as(self, predicate: str | None = None, files: int = 1) -> str:
        """"Read as: count lines matching `Failed password …`, whole file"."""
        what = predicate or ("all lines" if self.every_line else self.predicate_words())
        if self.over:
            head = (f"the {self.group_by} values with {OVER_WORDS[self.over[0]]} "
                    f"{self.over[1]:,} {what}")
        elif self.kind == "top" and self.top_k == 1:
            head = f"the {self.group_by} with the most {what}"
        elif self.kind == "top" and self.top_k:
            head = f"the top {self.top_k} {self.group_by} values by {what}"
        elif self.kind == "top":
            head = f"the {self.group_by} values by {what}"
        elif self.kind in ("count", "list"):
            by = f" per {self.group_by}" if self.group_by else ""
            head = f"{self.kind} {what}{by}"
        elif self.anchors:
            head = "lines mentioning " + ", ".join(f"`{a}`" for a in self.anchors)
        elif self.kind == "open":
            head = "an open question (what stands out)"
        else:
            head = "a question that needs reading"
        if self.unsure and self.kind in ("count", "top", "list"):
            head += " (not sure what a number of the question means: not counted)"
        return f"Read as: {head}, {self.scope(files)}."

    def predicate_words(self) -> str:
        if self.failures:
            return f"lines that report a failure ({FAILURE_RULE})"
        if self.level:
            return f"{self.level}-level lines" + self.conditions(also=True)
        if self.content_words:
            return ("lines matching " + " ".join(f"`{w}`" for w in self.content_words)
                    + self.conditions(also=True))
        return "lines" + self.conditions()

    def conditions(self, also: bool = False) -> str:
        """What every counted line must hold besides its words or level: " mentioning
        `1.2.3.4` and holding `status: 404`" (", also ..." after words or a level)."""
        out = []
        if self.anchors:
            out.append("mentioning " + " or ".join(f"`{a}`" for a in self.anchors))
        if self.literals:
            out.append("holding " + " and ".join(_labels(self.literals)))
        return ((", also " if also else " ") + " and ".join(out)) if out else ""


def _labels(lits: list[Literal]) -> list[str]:
    """Each literal as the answer states it; a key's range (two comparisons) as one."""
    out: list[str] = []
    for i, lit in enumerate(lits):
        prev = lits[i - 1] if i else None
        if prev and lit.op == "<=" and prev.op == ">=" and prev.key == lit.key:
            out[-1] = f"`{lit.key}` with a number from {prev.values[0]} to {lit.values[0]}"
        else:
            out.append(lit.label())
    return out


def _words(text: str, anchors: list[str]) -> list[str]:
    """The predicate's words: the text's words less anchors and words that frame a count
    (`attempts`, `are there`: recipes/lexicon.toml), in order."""
    _, filler = lexicon()
    for a in anchors:
        text = text.replace(a, " ")
    words = re.findall(r"[A-Za-z][\w'-]*[A-Za-z]|[A-Za-z]", text)
    return [w for w in words if w.lower() not in filler or w.lower() in ALL_WORDS
            or (w.isupper() and len(w) > 1)]  # GET, POST: a log's own word


def read_query(question: str) -> Query:
    """The typed query of `question`. Raises UsageError for a time code cannot read."""
    window = parse_window(question)
    rest = blank(question, [window.span]) if window else question
    anchors = extract_anchors(rest)
    if m := _TEXT_VERB.search(rest):
        anchors += [a for a in candidate_anchors(m.group("text")) if a not in anchors]
    q = Query(question, "read", anchors, window, rest=rest)
    body = rest.strip().rstrip("?.! ")
    span, skip, fallback = None, [], []  # what is counted: body[span]; numbers read already
    if not anchors and _failure_rule(body):
        q.kind, q.failures = ("count" if _HOW_MANY.search(body) else "list"), True
        if p := _PER.search(body):
            q.group_by = slot_name(p.group("slot"))
    elif (m := _WHICH_OVER.search(body)) and slot_name(m.group("slot")):
        q.kind, q.group_by = "top", slot_name(m.group("slot"))
        span, skip = m.span("what"), [m.span("n")]
        op = " ".join(m.group("op").lower().split())
        if op in OVER:
            q.over = (OVER[op], int(m.group("n")))
        else:
            q.unsure.append(f"`{op} {m.group('n')}` would hold the {q.group_by} values with "
                            "none, which code does not count")
    elif m := _WHICH_MOST.search(body):
        q.kind, q.top_k, q.group_by = "top", 1, slot_name(m.group("slot"))
        span = m.span("what")
        if q.group_by is None and m.group("slot").lower() not in _MESSAGE_WORDS:
            # "which step had the most lines?": not a field code knows; its kinds of message
            # would answer another question
            q.unsure.append(f"code does not know which part of a line is the "
                            f"`{m.group('slot')}`, so it cannot group by it")
    elif (m := _TOP_K.search(body)) and slot_name(m.group("slot")):
        q.kind, q.top_k, q.group_by = "top", int(m.group("k") or 10), slot_name(m.group("slot"))
        span = m.span("what") if m.group("what") else (m.end(), m.end())
        skip = [m.span("k")] if m.group("k") else []
        fallback = [m.group("slot")] if q.group_by == "template" else []
    elif m := _MOST_COMMON.search(body):
        q.kind, q.top_k, q.group_by = "top", int(m.group("k") or 10), "template"
        span, skip = m.span("what"), ([m.span("k")] if m.group("k") else [])
    elif m := _HOW_MANY.search(body):
        q.kind = "count"
        span = m.span("what")
        if p := _PER.search(m.group("what")):
            q.group_by = slot_name(p.group("slot"))
            span = (span[0], span[0] + p.start())
    elif m := _LIST.search(body):
        q.kind = "list"
        span = (m.end(), len(body))
    elif _OPEN.search(body):
        q.kind = "open"
    if span is not None:
        q.words = _read_what(q, body, span, skip) or fallback
    elif q.kind == "open" and _has_number(q, body):
        # "what happened with status 404?": the lines holding it, as an id is grepped for
        # ("errors with status 500": those of them at error level); "in the last 2 hours":
        # not sure, never the whole file's anomalies as if they answered it
        q.kind = "list"
        q.words = [w for w in _read_what(q, body, (0, len(body)), []) if w.lower() in LEVEL_WORDS]
    if q.kind == "count" and q.group_by is None and (p := _PER.search(body)):
        q.group_by = slot_name(p.group("slot"))
    if q.group_by is None and q.kind == "top":
        q.group_by = "template"
    return q


def _has_number(q: Query, body: str) -> bool:
    """A token holding a digit outside the anchors (the window's text is already blanked)."""
    spans = [(m.start(), m.end()) for a in q.anchors for m in re.finditer(re.escape(a), body)]
    return bool(re.search(r"\d", blank(body, spans)))


def _read_what(q: Query, body: str, span: tuple[int, int], skip: list) -> list[str]:
    """The predicate's words of body[span]; its numbers and literal tokens become q.literals
    (a number alone is a literal too: `2015`, `404`), and every number code cannot place is a
    reason it is not sure (rlm.corpus.literals)."""
    _, filler = lexicon()
    # `8080`, `404s`, `5xx`: a number is a whole token (`5xx`: 5 then two digits), not text
    q.anchors = [a for a in q.anchors if not re.fullmatch(r"\d+(?:'?s)?|\d[xX]{1,3}", a)]
    spans = [(m.start(), m.end()) for a in q.anchors for m in re.finditer(re.escape(a), body)]
    reading = numbers.read(blank(body, spans), span[0], span[1], filler, skip)
    q.literals, q.unsure = reading.literals, q.unsure + reading.unsure
    return _words(reading.rest, q.anchors)


def is_open_question(question: str) -> bool:
    return bool(_OPEN.search(question))
