"""The audit's lenses: code's rules for candidate lines, loaded from recipes/audit-lenses.toml.

Code selects; the model only picks among the selected lines and phrases a claim. Also code's view
of which test files import a module (``tested_by``)."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from rlm.corpus.modules import Module
from rlm.repo.candidates import Candidate
from rlm.repo.corpus import RepoCorpus
from rlm.repo.files import is_doc_file, is_test_file

MAX_CANDIDATES_PER_MODULE = 120


@dataclass(frozen=True)
class Rule:
    rx: re.Pattern
    why: str
    severity: str | None = None


@dataclass(frozen=True)
class Lens:
    name: str
    task: str  # the prompt in repo-audit.toml
    kind: str  # fact | risk
    tests_only: bool  # else: non-test code files
    skip_doc_lines: bool
    rules: tuple[Rule, ...]

    def match(self, line: str) -> Rule | None:
        return next((r for r in self.rules if r.rx.search(line)), None)


@lru_cache(maxsize=1)
def lenses() -> dict[str, Lens]:
    """Every lens, in the order the audit runs them."""
    text = resources.files("rlm.recipes").joinpath("audit-lenses.toml").read_text("utf-8")
    data = tomllib.loads(text)
    out = {}
    for name in data["order"]:
        d = data[name]
        rules = tuple(Rule(re.compile(r["pattern"]), r["why"], r.get("severity"))
                      for r in d["rules"])
        out[name] = Lens(name, d["task"], d["kind"], d["files"] == "tests",
                         bool(d["skip_doc_lines"]), rules)
    return out


LENSES: tuple[str, ...] = tuple(lenses())


def lens_candidates(corpus: RepoCorpus, module: Module, lens_name: str) -> list[Candidate]:
    """Lines of one module that code selects for a lens (in file order, capped)."""
    lens = lenses()[lens_name]
    out: list[Candidate] = []
    for f in module.files:
        if is_doc_file(f.path) or lens.tests_only != is_test_file(f.path):
            continue
        docs = corpus.doc_lines(f.path) if lens.skip_doc_lines else set()
        for i, s in enumerate(corpus.lines(f.path), 1):
            if not s.strip() or i in docs:
                continue
            rule = lens.match(s)
            if rule is not None:
                out.append(Candidate(f.path, i, s, rule.why, rule.severity))
                if len(out) >= MAX_CANDIDATES_PER_MODULE:
                    return out
    return out


_IMPORT_LINE = re.compile(r"\s*(?:from\s+\S+\s+import|import\s|const\s.*require\(|use\s|#include)")
_GENERIC_STEMS = ("__init__", "index", "main", "utils", "setup")


def _module_names(m: Module) -> set[str]:
    names = set()
    if not m.name.startswith("("):
        names.add(m.name.replace("/", "."))
    for f in m.files:
        stem = f.path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        if len(stem) >= 4 and stem not in _GENERIC_STEMS:
            names.add(stem)
    return names


def tested_by(corpus: RepoCorpus, modules: list[Module]) -> dict[str, list[str]]:
    """Code's view of tests: the test files whose import lines name a module or its files."""
    imports = {t: "\n".join(s for s in corpus.lines(t) if _IMPORT_LINE.match(s))
               for t in (f.path for f in corpus.files if is_test_file(f.path))}
    out: dict[str, list[str]] = {}
    for m in modules:
        if all(is_test_file(f.path) or is_doc_file(f.path) for f in m.files):
            continue
        rxs = [re.compile(rf"(?<![\w]){re.escape(n)}(?![\w])") for n in _module_names(m)]
        out[m.name] = [t for t, text in imports.items() if any(rx.search(text) for rx in rxs)]
    return out
