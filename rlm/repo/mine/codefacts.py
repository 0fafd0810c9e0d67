"""Mine's canonical question, answered by code before any model: "what already works and must
not be touched?" is the behaviour pinned by tests (each test -> definition link that code
resolved through imports and types, rlm.repo.links), the public API (``__all__`` or the public top-level definitions of the package) and the
documented commands (README code blocks that run a console script or ``python -m``).

Each answer is a Fact whose quote code takes from the file and checks with rlm.verify.evidence at its
``path:start-end``; a line that does not check out is dropped, never guessed at.
"""

from __future__ import annotations

import ast
import re

from rlm.verify import evidence
from rlm.verify.evidence import EvidenceStats, format_evidence_path
from rlm.repo.corpus import RepoCorpus
from rlm.repo.files import is_test_file
from rlm.repo.facts import RepoFacts, repo_facts
from rlm.schemas.repo_report import Fact

CANONICAL = re.compile(r"already\s+works|must\s+not\s+be\s+touched|must\s+not\s+(?:change|break)",
                       re.I)
MAX_API = 60  # public definitions listed; the run says when it stopped there
_FENCE = re.compile(r"^\s*(```|~~~)")


def is_canonical(question: str) -> bool:
    return bool(CANONICAL.search(question))


def _fact(c: RepoCorpus, stats: EvidenceStats, claim: str, path: str, a: int, b: int, basis: str,
          note: str, **where) -> Fact | None:
    lines = c.lines(path)
    first = next((ln.strip() for ln in lines[a - 1:b] if ln.strip()), "")
    ev = evidence.check(c.root, format_evidence_path(path, a, b), first, max_span=None)
    stats.add(ev)
    if not ev.ok:
        return None
    quote = "\n".join(lines[ev.line_start - 1:ev.line_end]).strip()
    return Fact(claim=claim, evidence_path=ev.evidence_path, quote=quote[:300],
                confidence="verified", basis=basis, note=note,
                module=where.get("module", path), **{k: v for k, v in where.items()
                                                     if k != "module"})


def _defined_there(c: RepoCorpus, where: str, name: str) -> bool:
    """The place of a link: the definition's own line reads `def name` or `class name`."""
    path, _, line = where.rpartition(":")
    if path not in c.by_path or not line.isdigit():
        return False
    text = (c.lines(path)[int(line) - 1:int(line)] or [""])[0]
    return re.search(rf"\b(?:def|class)\s+{re.escape(name)}\b", text) is not None


def pinned_by_tests(c: RepoCorpus, stats: EvidenceStats, rf: RepoFacts
                    ) -> tuple[list[Fact], list[Fact]]:
    """One verified fact per resolved test -> definition link (the test's call line checked as
    evidence, the definition's line checked as the place); one inferred fact per call code
    could not resolve, with its reason."""
    verified: list[Fact] = []
    inferred: list[Fact] = []
    for t in rf.links:
        if t.path not in c.by_path:
            continue
        for x in t.links:
            if x.status == "verified" and _defined_there(c, x.target.where, x.target.name):
                f = _fact(c, stats, f"`{x.target.qualname}` is pinned by `{t.name}`", t.path,
                          x.line, x.line, "code", x.reason, module=x.target.path,
                          definition=x.target.where, test=f"{t.path}::{t.name}")
                verified += [f] if f else []
            elif x.status == "inferred":
                names = ", ".join(f"`{d.qualname}`" for d in x.candidates)
                inferred.append(Fact(
                    claim=f"a call to one of {names}", evidence_path=f"{t.path}:{x.line}",
                    quote=(c.lines(t.path)[x.line - 1:x.line] or [""])[0].strip()[:300],
                    confidence="inferred", basis="names", note=x.reason,
                    module=x.candidates[0].path if x.candidates else t.path,
                    test=f"{t.path}::{t.name}"))
    return verified, inferred


def _package_files(c: RepoCorpus) -> list[str]:
    """Python files of the package(s): not tests, not scripts, not docs; top-level files only
    when the root is itself a package (an installed one)."""
    top = "__init__.py" in c.by_path
    return [f.path for f in c.files if f.path.endswith(".py") and not is_test_file(f.path)
            and (top or "/" in f.path)
            and not f.path.startswith(("scripts/", "examples/", "docs/"))
            and not _private(f.path)]


def _private(path: str) -> bool:
    """A private module or folder (``_client.py``): its public names are exported, if at all,
    through a package's ``__all__``."""
    return any(p.startswith("_") and p != "__init__.py" and p != "__main__.py"
               for p in path.split("/"))


def public_api(c: RepoCorpus, stats: EvidenceStats) -> list[Fact]:
    out: list[Fact] = []
    for path in _package_files(c):
        try:
            tree = ast.parse("\n".join(c.lines(path)))
        except (SyntaxError, ValueError):
            continue
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__"
                                                    for t in node.targets):
                names = [e.value for e in getattr(node.value, "elts", [])
                         if isinstance(e, ast.Constant) and isinstance(e.value, str)]
                shown = ", ".join(f"`{n}`" for n in names[:12]) + (
                    f" and {len(names) - 12} more" if len(names) > 12 else "")
                x = _fact(c, stats, f"public API: `{path}` exports {shown or '__all__'}",
                          path, node.lineno, node.end_lineno or node.lineno, "names",
                          "found by code: the module's __all__")
                out += [x] if x else []
            elif (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                  and not node.name.startswith("_") and not path.endswith("__main__.py")):
                what = "class" if isinstance(node, ast.ClassDef) else "function"
                x = _fact(c, stats, f"public API: {what} `{node.name}` in `{path}`", path,
                          node.lineno, node.lineno, "names",
                          "found by code: a public top-level definition of the package")
                out += [x] if x else []
            if len(out) >= MAX_API:
                return out
    return out


def documented_commands(c: RepoCorpus, stats: EvidenceStats, rf: RepoFacts) -> list[Fact]:
    """Lines of README code blocks that run a console script, a CLI or ``python -m pkg``."""
    scripts = {m.group(1) for f in rf.of("entry_point")
               if (m := re.match(r"console script `([^`]+)`", f.claim))}
    pkgs = {p.split("/", 1)[0] for p in _package_files(c)}
    out: list[Fact] = []
    for path in (f.path for f in c.files if f.path.rsplit("/", 1)[-1].lower().startswith("readme")):
        inside = False
        for i, ln in enumerate(c.lines(path), 1):
            if _FENCE.match(ln):
                inside = not inside
                continue
            cmd = ln.strip().lstrip("$ ").strip()
            words = cmd.split()
            if not inside or not words:
                continue
            runs = words[0] in scripts or (words[:2] == ["python", "-m"] and len(words) > 2
                                           and words[2].split(".")[0] in pkgs)
            if runs:
                x = _fact(c, stats, f"documented command: `{cmd}`", path, i, i, "docs",
                          "found by code: a README code block runs a declared entry point")
                out += [x] if x else []
    return out


def canonical_facts(c: RepoCorpus, stats: EvidenceStats, rf: RepoFacts | None = None
                    ) -> tuple[list[Fact], list[Fact]]:
    """(verified, inferred): every verified fact checked by rlm.verify.evidence (``stats`` counts the
    checks) and, for tests, resolved through imports and types; inferred: the test calls code
    could not resolve, each with its reason."""
    rf = rf or repo_facts(c.root)
    pinned, unresolved = pinned_by_tests(c, stats, rf)
    return pinned + public_api(c, stats) + documented_commands(c, stats, rf), unresolved
