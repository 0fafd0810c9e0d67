"""A log question's words mapped to the templates that carry their meaning.

"How many failed password attempts?" is not "lines holding `fail`, `password` and `attempt`":
it is the templates whose words carry `fail` and `password` (`Failed password for <*> from
<*> port <*> ssh2`). Each question word becomes a concept: its group in the lexicon
(recipes/lexicon.toml: `failed`, `failure` and `fail` are one concept), else its stem. Words
that frame a count (`attempts`, `times`, `entries`) are dropped. A template matches when its
words hold every concept; templates that hold the concepts as a phrase (adjacent, in order)
rank first. When no template holds them all, the match is not confident: the nearest
templates (most concepts held) are named, and no number is stated as the answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from rlm.prompts import recipe

_WORD = re.compile(r"[A-Za-z][A-Za-z-]*[A-Za-z]|[A-Za-z]")
NEAREST = 3
# lines of templates that hold all of the question's words but the thing it counts, against the
# lines counted, from which a loose match is not sure (Proxifier: "connections closed" held
# by 3 "Proxy closed the connection" lines, and `close` alone by 947 "<host> close, <n> bytes")
SHADOW = 10
SHADOW_MIN = 20


@lru_cache(maxsize=1)
def lexicon() -> tuple[dict[str, str], frozenset[str]]:
    """(word -> concept, filler words) from recipes/lexicon.toml."""
    data = recipe.load("lexicon")
    concept = {w: name for name, words in data["groups"].items() for w in words}
    return concept, frozenset(data["filler"]["words"])


@lru_cache(maxsize=1)
def _group_names() -> frozenset[str]:
    """The lexicon's concept names (a set: line_holds asks once a line)."""
    return frozenset(lexicon()[0].values())


def stem(word: str) -> str:
    """A light stem: plural, then -ing/-ed, then a final e (`failures`, `failure` -> failur;
    `failed` -> fail; `closed`, `close` -> clos)."""
    w = _plain(word)
    for suf in ("ing", "ed"):
        if w.endswith(suf) and len(w) > len(suf) + 2:
            w = w[: -len(suf)]
            break
    return w[:-1] if w.endswith("e") and len(w) > 3 else w


def concept_of(word: str) -> str:
    concept, _ = lexicon()
    w = word.lower()
    return concept.get(w) or concept.get(stem(w)) or stem(w)


def words_of(text: str) -> list[str]:
    """The alphabetic words of a text, `-`-joined parts also split (`break-in`, `pam_unix`)."""
    out = []
    for m in _WORD.finditer(text):
        w = m.group(0)
        out.append(w)
        if "-" in w:
            out += [p for p in w.split("-") if p]
    return out


def question_concepts(words: list[str]) -> list[str]:
    """The concepts of the question's predicate words, filler dropped, in order, unique."""
    _, filler = lexicon()
    out: list[str] = []
    for w in words:
        if (w.lower() in filler and not w.isupper()) or len(w) < 2:
            continue
        c = concept_of(w)
        if c not in out:
            out.append(c)
    return out


@dataclass
class Scored:
    row: object  # a template row (rlm.corpus.templates.Row)
    held: list[str]  # the question's concepts this template holds
    phrase: bool  # the concepts appear adjacent and in order


@dataclass
class Match:
    concepts: list[str]
    stems: list[str] = field(default_factory=list)  # the question's words, stemmed
    rows: list[Scored] = field(default_factory=list)  # templates holding every concept
    related: list[Scored] = field(default_factory=list)  # by synonym only, when stems matched
    nearest: list[Scored] = field(default_factory=list)  # when none holds all: the closest
    apart: list[Scored] = field(default_factory=list)  # hold the words apart, or inside other
    # words, where other templates hold them as the question wrote them: named, not counted
    how: str = ""  # "phrase" or "words" when rows were kept for holding the question's words
    # as it wrote them (together, or each as a whole word); `said` is what they hold
    said: str = ""
    # template text -> regexes its lines must match: the question's words that the template
    # holds only in a variable part (`startup packages <*>`: 25 of its 26 lines say configure)
    needs: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # when the rows hold the words only apart: the templates that hold all of them but one,
    # SHADOW times the rows' lines or more (named; the count is then not sure)
    shadow: list[Scored] = field(default_factory=list)

    @property
    def confident(self) -> bool:
        return bool(self.concepts) and bool(self.rows)

    @property
    def total(self) -> int:
        return sum(s.row.count for s in self.rows)


def _score(words: list[str], concepts: list[str]) -> tuple[list[str], bool]:
    seq = [concept_of(w) for w in words]
    held = [c for c in concepts if c in seq]
    phrase = False
    if len(concepts) >= 2 and len(held) == len(concepts):
        n = len(concepts)
        phrase = any(seq[i:i + n] == concepts for i in range(len(seq) - n + 1))
    return held, phrase


def phrase_of(text: str, concepts: list[str]) -> str:
    """The template's words from the first to the last of the question's concepts: what it
    says about them (`authentication failure`; `Deleting block`; `NameSystem.delete`)."""
    words = words_of(text)
    at = [i for i, w in enumerate(words) if concept_of(w) in concepts]
    return " ".join(w.lower() for w in words[at[0]:at[-1] + 1]) if at else ""


def match(rows: list, words: list[str], example=None) -> Match:
    """The rows (each with .text and .count) whose words hold every concept of the question's
    `words`. Rows holding every word by its own stem (`failures` ~ `failure`) are the answer
    when there are any; rows that hold them only through the lexicon (`failed`) are then
    `related`, named but not counted. `example(row)` gives a real line of the row, whose
    variable tokens still show their words (`blk_-123` is a `blk`)."""
    _, filler = lexicon()
    concepts = question_concepts(words)
    stems = [s for s in dict.fromkeys(stem(w) for w in words if len(w) >= 2 and (
        w.lower() not in filler or w.isupper()))]
    m = Match(concepts, stems)
    if not concepts:
        return m
    exact: list[Scored] = []
    partial: list[Scored] = []
    seen: set[str] = set()  # the concepts some template or example line holds
    for row in rows:
        text = row.text + (" " + example(row) if example else "")
        ws = words_of(text)
        held, phrase = _score(ws, concepts)
        seen.update(held)
        if len(held) == len(concepts):
            own = {stem(w) for w in ws}
            (exact if all(s in own for s in stems) else m.rows).append(Scored(row, held, phrase))
        elif held:
            partial.append(Scored(row, held, False))
    if exact:
        m.rows, m.related = exact, m.rows
    counted = [w for w in words if len(w) >= 2 and (w.lower() not in filler or w.isupper())]
    loose = _in_no_template(rows, concepts)
    if loose and seen.issuperset(concepts):
        _line_by_line(m, rows, concepts, loose)
    else:
        _as_written(m, counted, example)
        _variable_words(m, counted)
    for lst in (m.rows, m.related):
        lst.sort(key=lambda s: (not s.phrase, -s.row.count))
    if not m.rows:
        partial.sort(key=lambda s: (-len(s.held), -s.row.count))
        m.nearest = partial[:NEAREST]
    elif len(concepts) >= 2 and not any(s.phrase for s in m.rows):
        _shadow(m, partial, counted)
    return m


def _shadow(m: Match, partial: list[Scored], words: list[str]) -> None:
    """m.shadow: the templates that hold all of the question's concepts but the one of a thing
    it counts, when they have SHADOW times the counted lines. The thing is a plural that the
    question says something of after it ("connections were closed"): a log line can be the
    thing without naming it (a Proxifier line `<host> close, ...` is a closed connection). It
    cannot be the event or state without saying it: not "unavailable" (a line about nodes is
    no unavailable node), and not the last word ("kernel panics": a kernel line is no panic)."""
    things = {concept_of(w) for w in words if _plain(w) != w.lower()} - {m.concepts[-1]}
    near = [s for s in partial if len(s.held) == len(m.concepts) - 1
            and set(m.concepts) - set(s.held) <= things]
    if sum(s.row.count for s in near) >= max(SHADOW * m.total, SHADOW_MIN):
        m.shadow = sorted(near, key=lambda s: -s.row.count)


def _plain(word: str) -> str:
    """A word without its plural ending, lower case (`installs` -> install; `installed` stays)."""
    w = word.lower()
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    return w[:-1] if w.endswith("s") and not w.endswith("ss") and len(w) > 3 else w


def _as_written(m: Match, words: list[str], example) -> None:
    """Keep the rows that hold the question's words as it wrote them, when some do and others
    hold them only loosely: the words together where the question has them together (`status
    installed`, not `status half-installed`), then each word whole (`install`, not `installed`
    or `half-installed`; not a word of a lexicon group, whose forms are one meaning). The
    others move to m.apart: named, not counted."""
    if len(m.rows) < 2:
        return
    together = [s for s in m.rows if s.phrase]
    if together and len(together) < len(m.rows):
        m.apart += [s for s in m.rows if not s.phrase]
        m.rows, m.how = together, "phrase"
        m.said = phrase_of(together[0].row.text, m.concepts)
    whole: list[str] = []
    groups = lexicon()[0]
    tokens = {id(s): {_plain(t) for t in words_of(s.row.text + (" " + example(s.row)
                                                                 if example else ""))}
              for s in m.rows}  # each row's words once (an example is a read of the file)
    for w in dict.fromkeys(_plain(w) for w in words if w.lower() not in groups):
        # a word of a lexicon group keeps its group (`failed` ~ `failure`): its forms are one
        holding = [s for s in m.rows if w in tokens[id(s)]]
        if holding and len(holding) < len(m.rows):
            m.apart += [s for s in m.rows if s not in holding]
            m.rows = holding
            whole.append(w)
    if whole and not m.how:
        m.how, m.said = "words", " ".join(whole)


def _variable_words(m: Match, words: list[str]) -> None:
    """m.needs: for each counted template that holds a question word only through its example
    line (the word is in a variable part), what each of its lines must hold (line_holds)."""
    whole = set(m.said.split()) if m.how == "words" else set()
    for sc in m.rows:
        own = words_of(sc.row.text)
        concepts = {concept_of(w) for w in own}
        plains = {_plain(w) for w in own}
        need = []
        for w in words:
            p = _plain(w)
            if p in whole and p not in plains:
                need.append("w:" + p)
            elif p not in whole and concept_of(w) not in concepts:
                need.append("c:" + concept_of(w))
        if need:
            m.needs[sc.row.text] = tuple(dict.fromkeys(need))


def _stem_root(concept: str) -> str:
    """What every word of this stem starts with: `reply` stems `replies`, which holds `repl`."""
    return concept[:-1] if concept.endswith("y") else concept


def line_holds(text: str, needs: tuple[str, ...]) -> bool:
    """The line holds each of `needs` ("c:" a concept, "w:" a whole word, plural or not), read
    as match() reads a template's words."""
    low = text.lower()
    groups = _group_names()
    if any(n[0] == "c" and n[2:] not in groups and _stem_root(n[2:]) not in low for n in needs):
        return False  # a stem is a word's start (but a `y` for `ies`): not here, not held
    ws = words_of(text)
    concepts = {concept_of(w) for w in ws} if any(n[0] == "c" for n in needs) else set()
    plains = {_plain(w) for w in ws} if any(n[0] == "w" for n in needs) else set()
    return all((n[2:] in concepts) if n[0] == "c" else (n[2:] in plains) for n in needs)


def _in_no_template(rows: list, concepts: list[str]) -> list[str]:
    """The concepts no template's own words hold: the log writes them only in variable parts
    (`sshd` in `sshd(pam_unix)[19939]`, a user name, a host)."""
    held: set[str] = set()
    for row in rows:
        held.update(concept_of(w) for w in words_of(row.text))
    return [c for c in concepts if c not in held]


def _line_by_line(m: Match, rows: list, concepts: list[str], loose: list[str]) -> None:
    """Some of the question's words are only in lines' variable parts: which template an
    example line shows says nothing of the others ("session closed for user test" is written
    by sshd and by su). Every template whose own words hold the other concepts counts, each
    of its lines checked for the loose ones (m.needs)."""
    fixed = [c for c in concepts if c not in loose]
    m.rows, m.related = [], []
    for row in rows:
        held, _ = _score(words_of(row.text), fixed) if fixed else ([], False)
        if len(held) == len(fixed):
            m.rows.append(Scored(row, concepts, False))
            m.needs[row.text] = tuple("c:" + c for c in loose)
