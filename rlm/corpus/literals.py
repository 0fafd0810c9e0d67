"""Numbers and other literal tokens of a count question, read as part of what is counted.

"how many status 404 lines?" is not "lines holding `status`": the number is the question. A
token holding a digit (`404`, `uid=0`, `HTTP/1.1`, `404s`, `5xx`) is a literal. The word written
just before it (`status`, `port`) is its key when it names something (not a framing word such
as `with`; `time:` joined by a colon is a key), and a line must hold the key, then the value,
joined by a few separators as logs write a field (`status: 404`, `status=404`, `status 404`);
the value is a whole token (`port 22` is not `port 2222`, `uid=0` is not `euid=0`). Values
joined by `or` are alternatives of one key (`status 404 or 500`). Some keys have other forms a
log writes (KEY_FORMS: `port 50010` is also `10.251.73.220:50010`, `pid 1702` also `sshd[1702]`
and the pid column). A threshold on a key's number (`time over 0.3`, `status >= 400`) is a
comparison, checked on each line's number after the key.

A number that is a limit, a threshold with no key, a rank, a range, a quantity or a duration
(`more than 200 requests`, `the last 404`, `between 400 and 499`, `5 minutes`) is not a
predicate word, and
code does not guess what it means: the reading carries a reason, and the count answers
not-sure (exit 3). So does a number followed by a word that may describe it (`404 errors`: the
status, or error-level lines?) and a number outside the part of the question that says what is
counted (`how many lines per hour with status 404`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# between a key and its value: `: `, `=`, `="`, ` `, `#`, `[` (at most 4 characters)
SEP = r"[\s:=#\"'\[(]{1,4}"
_TOKEN = re.compile(r"\S+")
_LEAD = "([{\"'`"
_TRAIL = "?!,;:)]}\"'`>."
_WORD = re.compile(r"[A-Za-z][\w'-]*[A-Za-z]|[A-Za-z]")
_PLURAL_NUMBER = re.compile(r"^(\d+)'?s$")  # 404s
_CLASS_NUMBER = re.compile(r"^(\d)([xX]{1,3})$")  # 5xx: any 3-digit number starting with 5
_JOINS = re.compile(r"^[\s:=]*$")
_SEP_TOKEN = re.compile(r"[:=]+")
# an address a port follows: IPv4, a bracketed IPv6, a host name with a dot or a hyphen
# (`proxy.cse.cuhk.edu.hk`, `msra-sa-41`; never a bare word: `code:404` is no port), localhost
_ADDRESS = (r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}|\]|(?<![\w.-])[A-Za-z][\w-]*(?:\.[\w-]+)+"
            r"|(?<![\w.-])[A-Za-z]\w*(?:-\w+)+|\blocalhost")
# the pid column: after the time, before the level (logcat: then the thread id)
# a level as a line's header writes it after the pid (also rlm.corpus.slots' pid column)
LEVEL_AFTER_PID = r"(?:[VDIWEFA]|INFO|WARN|WARNING|ERROR|DEBUG|TRACE|FATAL|CRITICAL|NOTICE)\b"
_PID_COLUMN = (r"(?:\d\d:\d\d:\d\d(?:[.,]\d+)?|(?<![\w.])\d{6})\s+{vals}\s+(?:\d+\s+)?"
               + LEVEL_AFTER_PID)
KEY_FORMS = {
    "port": ("(?:" + _ADDRESS + "):{vals}", "<address>:{v}"),  # 10.251.73.220:50010
    # sshd[24200]; `03-17 16:13:38.811  1702  2395 D`, `081109 203615 148 INFO` (HDFS)
    "pid": (r"(?:\[{vals}\]|" + _PID_COLUMN + ")", "[{v}]` or the pid column `{v}"),
}
# `time over 0.3`, `len greater than 2000`, `status >= 500`: a threshold on the number the log
# writes after a key is answered line by line (a threshold with no key is not)
_KEY_CMP = re.compile(
    r"(?<![\w-])(?P<key>[A-Za-z][\w-]*)\s*[:=]?\s*(?P<op>(?:more|greater|higher|larger|bigger|"
    r"longer)\s+than|(?:less|fewer|lower|smaller|shorter)\s+than|over|above|exceeding|under|"
    r"below|at\s+least|at\s+most|>=|<=|>|<)\s*$", re.I)
_KEY_RANGE = re.compile(r"(?<![\w-])(?P<key>[A-Za-z][\w-]*)\s*[:=]?\s*(?:between|from|in)\s+$",
                        re.I)
# words before a comparison that frame it, never a key (`time`, a filler word, can be one)
_NOT_KEYS = frozenset("""with have has had having of in for from by on at to and or are is was
were be been lines line entries entry records record events event messages than a an the any all
that which who whose where when took take takes lasted last lasting many much more most""".split())
CMP = {"over": ">", "above": ">", "exceeding": ">", "under": "<", "below": "<", "at least": ">=",
       "at most": "<=", ">=": ">=", "<=": "<=", ">": ">", "<": "<"}
CMP_WORDS = {">": "over", ">=": "of at least", "<": "under", "<=": "of at most"}
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_THRESHOLD_BEFORE = re.compile(
    r"(?:(?:more|less|fewer|greater|higher|lower|larger|bigger|smaller|longer|shorter|slower|"
    r"faster|other)\s+than|over|under|above|below|exceed(?:s|ing|ed)?|beyond|at\s+least|"
    r"at\s+most|up\s+to|minimum(?:\s+of)?|maximum(?:\s+of)?|min|max|[<>]=?|[≥≤])\s*$", re.I)
_THRESHOLD_AFTER = re.compile(
    r"^\s*(?:\+|or\s+(?:more|fewer|less|above|below|higher|lower|over|under|greater|better|"
    r"worse)|and\s+(?:above|up|over|more|below|under|less|higher|lower))\b|^\+", re.I)
_RANK_BEFORE = re.compile(r"\b(?:top|first|last|latest|earliest|final|bottom|previous|next|"
                          r"recent|oldest|newest|biggest|largest|smallest|highest|lowest)"
                          r"\s*$", re.I)
_RANK_AFTER = re.compile(r"^\s*(?:most|least|biggest|largest|smallest|busiest|highest|lowest|"
                         r"top|worst|best|noisiest|slowest|fastest)\b", re.I)
_RANGE_BEFORE = re.compile(r"\b(?:between|from|range|ranging)\s*$|\bbetween\s+\S+\s+and\s*$|"
                           r"\d\s*(?:to|through|-|–)\s*$", re.I)
_RANGE_AFTER = re.compile(r"^\s*(?:to|through|until|till|-|–)\s*\d", re.I)
_UNIT_AFTER = re.compile(
    r"^\s*(?:ms|msecs?|milliseconds?|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?|days?|"
    r"weeks?|months?|years?|times|x|bytes?|[kmgt]i?b|kilobytes?|megabytes?|gigabytes?|"
    r"percent)\b|^%",
    re.I)
_OR = re.compile(r"^\s*(?:,\s*)?or\s*$|^\s*,\s*$", re.I)
_AND = re.compile(r"^\s*and\s*$", re.I)


@dataclass
class Literal:
    """A literal the counted lines must hold: `key` then one of `values` (or a value alone)."""

    text: str  # as the question wrote it: "status 404", "uid=0", "404 or 500"
    values: list[str]
    key: str | None = None
    written: list[str] = field(default_factory=list)  # as the log writes it (after a count)
    op: str | None = None  # ">", ">=", "<", "<=": the key's number compared (`time over 0.3`)

    def pattern(self) -> str:
        """A case-insensitive regex (str; the same source works on bytes) for one line."""
        if self.op:  # the number after the key, captured for the comparison
            return f"(?i)(?<![\\w]){_key_rx(self.key)}{SEP}(?P<n>-?\\d+(?:\\.\\d+)?)(?![\\w]|\\.\\d)"
        value = _values_rx(self.values)
        if not self.key:
            return "(?i)" + value
        keyed = f"(?<![\\w]){_key_rx(self.key)}{SEP}{value}"
        if form := KEY_FORMS.get(self.key.lower().rstrip("s")):  # `port 50010`: `…:50010`
            other = form[0].replace("{vals}", value)
            return f"(?i)(?:{keyed}|{other})"
        return "(?i)" + keyed

    def needle(self) -> str:
        """The values alone, a plain alternation: a prefilter Python's regex engine finds at
        C speed (the boundaries, the key and its other forms are checked per hit)."""
        if self.op:
            return "(?i)" + _key_rx(self.key)
        vals = "|".join(_value_rx(v) for v in self.values)
        return ("(?i)" if any(c.isalpha() for v in self.values for c in v) else "") + vals

    def parts(self) -> tuple[str, str] | None:
        """(key regex, value regex) each alone: lines holding both, not joined, are the ones
        a zero count must not hide."""
        if not self.key or self.op:
            return None
        return (f"(?i)(?<![\\w]){_key_rx(self.key)}(?![\\w])", "(?i)" + _values_rx(self.values))

    def label(self) -> str:
        """`status: 404` as the log writes it when a count found it, else as asked."""
        if self.op:
            return f"`{self.key}` with a number {CMP_WORDS[self.op]} {self.values[0]}"
        vals = "|".join(self.values)
        if self.key and (form := KEY_FORMS.get(self.key.lower().rstrip("s"))):
            other = form[1].replace("{v}", vals)
            return f"`{self.key} {vals}` or `{other}`"
        if self.written:
            return " or ".join(f"`{w}`" for w in self.written[:3])
        vals = " or ".join(f"`{v}`" for v in self.values)
        return f"`{self.key}` then {vals}" if self.key else vals


def _value_rx(value: str) -> str:
    if m := _CLASS_NUMBER.match(value):
        return m.group(1) + r"\d" * len(m.group(2))
    return re.escape(value)


def _values_rx(values: list[str]) -> str:
    """Each value as a whole token: `22` is not in `2222`, `0.22` or `1.22.3`; a value that
    starts or ends with a sign (`:3888`, `-1`) is bounded only on its word side."""
    out = []
    for v in values:
        lead = r"(?<![\w.])" if v[0].isalnum() or v[0] == "_" else ""
        trail = r"(?![\w]|\.\d)" if v[-1].isalnum() or v[-1] in "_xX" else ""
        out.append(lead + _value_rx(v) + trail)
    return "(?:" + "|".join(out) + ")"


def _key_rx(key: str) -> str:
    low = key.lower()
    base = key[:-1] if low.endswith("s") and not low.endswith("ss") and len(key) > 3 else key
    return re.escape(base) + "(?:e?s)?"


@dataclass
class Reading:
    """The literals of the part of a question that says what is counted, the reasons code is
    not sure what a number means, and that part with the literals blanked (for its words)."""

    literals: list[Literal] = field(default_factory=list)
    unsure: list[str] = field(default_factory=list)
    rest: str = ""


@dataclass
class _Tok:
    start: int
    end: int
    text: str


def _tokens(text: str) -> list[_Tok]:
    out = []
    for m in _TOKEN.finditer(text):
        raw = m.group(0)
        a, b = 0, len(raw)
        while a < b and raw[a] in _LEAD:
            a += 1
        while b > a and raw[b - 1] in _TRAIL:
            b -= 1
        if a < b:
            out.append(_Tok(m.start() + a, m.start() + b, raw[a:b]))
    return out


def _value_of(tok: str) -> str:
    m = _PLURAL_NUMBER.match(tok)
    return m.group(1) if m else tok


def _role(body: str, tok: _Tok) -> tuple[str | None, int]:
    """Why the number at `tok` is not a value to match (a reason, or None), and where the
    words that say so begin (`more than 10`: they frame the count, they are not its words)."""
    before, after = body[:tok.start], body[tok.end:]
    shown = f"`{tok.text}`"
    if tok.text[0] in "<>≥≤" or tok.text.endswith("+"):
        return f"{shown} reads as a threshold, which code does not count by", tok.start
    if m := _THRESHOLD_BEFORE.search(before):
        return (f"{_quote(m.group(0), tok.text)} reads as a threshold, which code does not "
                "count by"), m.start()
    if _THRESHOLD_AFTER.search(after):
        return (f"{shown} with `{after.strip().split()[0] if after.strip() else ''}` reads as "
                "a threshold, which code does not count by"), tok.start
    if m := _UNIT_AFTER.search(after):
        return (f"`{tok.text} {m.group(0).strip()}` reads as a quantity or a duration, not as "
                "text the lines hold"), tok.start
    if m := _RANK_BEFORE.search(before):
        return (f"{_quote(m.group(0), tok.text)} reads as a position or a rank, not as text the "
                "lines hold"), m.start()
    if _RANK_AFTER.search(after):
        return (f"{shown} reads as a rank or a number of results, not as text the lines hold",
                tok.start)
    if _RANGE_BEFORE.search(before) or _RANGE_AFTER.search(after) or re.fullmatch(
            r"\d+-\d+", tok.text):
        return f"{shown} is part of a range of numbers, which code does not count by", tok.start
    return None, tok.start


def _key_range(r: Reading, body: str, tok: _Tok) -> tuple[int, int] | None:
    """Adds `key between A and B` (`status between 400 and 499`, `from A to B`) to r as two
    comparisons; returns the span of its words, or None."""
    m = _KEY_RANGE.search(body[:tok.start])
    hi = re.match(r"\s+(?:and|to|through|-|–)\s+(-?\d+(?:\.\d+)?)(?![\w.])", body[tok.end:])
    if not m or not hi or not _NUMBER.fullmatch(tok.text) or m.group("key").lower() in _NOT_KEYS:
        return None
    text = body[m.start():tok.end + hi.end()]
    r.literals += [Literal(text, [tok.text], m.group("key"), op=">="),
                   Literal(text, [hi.group(1)], m.group("key"), op="<=")]
    return m.start(), tok.end + hi.end()


def _comparison(r: Reading, body: str, tok: _Tok) -> int | None:
    """Adds `key op number` (`time over 0.3`) to r as a comparison; returns where its words
    begin, or None when the number is not compared to a key's."""
    m = _KEY_CMP.search(body[:tok.start])
    if not m or not _NUMBER.fullmatch(tok.text) or m.group("key").lower() in _NOT_KEYS:
        return None
    op = " ".join(m.group("op").lower().split())
    op = CMP.get(op) or (">" if op.split()[0] in ("more", "greater", "higher", "larger",
                                                   "bigger", "longer") else "<")
    r.literals.append(Literal(body[m.start():tok.end], [tok.text], m.group("key"), op=op))
    return m.start()


def compares(op: str, got: float, n: float) -> bool:
    return {">": got > n, ">=": got >= n, "<": got < n, "<=": got <= n}[op]


def _quote(before: str, tok: str) -> str:
    return f"`{before.strip()} {tok}`"


def read(body: str, start: int, end: int, filler: frozenset[str], skip=()) -> Reading:
    """The literals of body[start:end] (what is counted), and a reason for every other number
    of `body` (the question, its window and anchors blanked) that code cannot place. `skip`:
    spans whose numbers are already read (a top k)."""
    r = Reading(rest=body[start:end])
    toks = _tokens(body)
    chars = list(body)
    ranged: list[tuple[int, int]] = []
    for i, tok in enumerate(toks):
        if not any(c.isdigit() for c in tok.text) or any(a <= tok.start < b for a, b in skip):
            continue
        if any(a <= tok.start < b for a, b in ranged):
            continue  # the upper end of a key's range, read with its lower end
        if start <= tok.start and tok.end <= end and (span := _key_range(r, body, tok)):
            ranged.append(span)
            chars[span[0]:span[1]] = " " * (span[1] - span[0])
            continue
        if start <= tok.start and tok.end <= end and (lo := _comparison(r, body, tok)):
            chars[lo:tok.end] = " " * (tok.end - lo)
            if unit := _UNIT_AFTER.match(body[tok.end:]):  # `over 0.3 seconds`: the log's unit
                chars[tok.end:tok.end + unit.end()] = " " * unit.end()
            continue
        why, lo = _role(body, tok)
        if why is None and not (start <= tok.start and tok.end <= end):
            why = f"`{tok.text}` is outside what the question counts, and code cannot tell " \
                  "what it applies to"
        if why is None:
            why = _place(r, body, toks, i, filler)
        if why:
            r.unsure.append(why)
        chars[lo:tok.end] = " " * (tok.end - lo)
    r.rest = "".join(chars)[start:end]
    for lit in r.literals:  # the key is the literal's, not a word of its own
        if lit.key:
            r.rest = re.sub(rf"(?<![\w]){re.escape(lit.key)}(?![\w])", " ", r.rest, count=1)
    return r


def _place(r: Reading, body: str, toks: list[_Tok], i: int, filler: frozenset[str]) -> str | None:
    """Adds the literal at toks[i] to r (a value alone, a key's value, or one more value of
    the literal before it); or the reason it cannot."""
    tok = toks[i]
    value = _value_of(tok.text)
    prev = toks[i - 1] if i else None
    if prev and _SEP_TOKEN.fullmatch(prev.text) and i > 1:  # `port = 11`: the key is before
        prev = toks[i - 2]
    gap = body[prev.end:tok.start] if prev else ""
    if why := _after(body, toks, i, filler):
        return why
    if r.literals and prev and _OR.match(body[_last_end(r, toks, i):tok.start]):
        if r.literals[-1].op:
            return (f"`{r.literals[-1].text} or {tok.text}`: code cannot tell what `{tok.text}` "
                    "is compared with")
        r.literals[-1].values.append(value)
        r.literals[-1].text += f" or {tok.text}"
        return None
    if r.literals and prev and _AND.match(body[_last_end(r, toks, i):tok.start]) and (
            re.fullmatch(r"[\d.,]+", tok.text)):  # `uid=0 and euid=0`: both, clearly
        return (f"`{r.literals[-1].text} and {tok.text}`: code cannot tell whether a line must "
                "hold both or either")
    key = None
    if prev and _JOINS.match(gap) and _WORD.fullmatch(prev.text.rstrip(":=")):
        word = prev.text.rstrip(":=")
        if word.lower() not in filler or any(c in gap + prev.text for c in ":="):
            key = word
    text = body[prev.start:tok.end] if key else tok.text
    r.literals.append(Literal(text, [value], key))
    return None


def _last_end(r: Reading, toks: list[_Tok], i: int) -> int:
    """The end of the token before toks[i] that holds a digit (the last literal's value)."""
    for t in reversed(toks[:i]):
        if any(c.isdigit() for c in t.text):
            return t.end
    return 0


def _after(body: str, toks: list[_Tok], i: int, filler: frozenset[str]) -> str | None:
    """A word right after the value may describe it (`404 errors`) or name another
    condition: code cannot tell which, unless it frames the count or is the next key."""
    if i + 1 >= len(toks):
        return None
    nxt = toks[i + 1]
    gap = body[toks[i].end:nxt.start]
    if not gap.isspace() or not _WORD.fullmatch(nxt.text) or nxt.text.lower() in filler:
        return None
    if i + 2 < len(toks) and any(c.isdigit() for c in toks[i + 2].text):
        return None  # `port 22 status 404`: the next key
    return (f"`{toks[i].text} {nxt.text}`: code cannot tell whether `{nxt.text}` describes "
            f"`{toks[i].text}` or names more that the lines must hold")
