"""Mine's canonical question, answered by code before any model: "what already works and must
not be touched?" is the behaviour pinned by tests (each test and the package functions it
calls), the public API (``__all__`` or the public top-level definitions of the package) and the
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


def _fact(c: RepoCorpus, stats: EvidenceStats, claim: str, path: str, a: int, b: int, basis: str, note: str
          ) -> Fact | None:
    lines = c.lines(path)
    first = next((ln.strip() for ln in lines[a - 1:b] if ln.strip()), "")
    ev = evidence.check(c.root, format_evidence_path(path, a, b), first, max_span=None)
    stats.add(ev)
    if not ev.ok:
        return None
    quote = "\n".join(lines[ev.line_start - 1:ev.line_end]).strip()
    return Fact(claim=claim, evidence_path=ev.evidence_path, quote=quote[:300],
                confidence="verified", basis=basis, note=note)


def pinned_by_tests(c: RepoCorpus, stats: EvidenceStats, rf: RepoFacts) -> list[Fact]:
    out = []
    for f in rf.of("test"):
        if f.path in c.by_path:
            where = ", ".join(f.detail.get("defined_at", [])[:4])
            x = _fact(c, stats, f"pinned by a test: {f.claim}" + (f" (defined at {where})" if where
                                                          else ""),
                      f.path, f.line_start, f.line_end, "code",
                      "found by code: the test calls these package functions by name")
            if x:
                out.append(x)
    return out


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
                    ) -> list[Fact]:
    """Every fact checked by rlm.verify.evidence; ``stats`` counts the checks."""
    rf = rf or repo_facts(c.root)
    return (pinned_by_tests(c, stats, rf) + public_api(c, stats)
            + documented_commands(c, stats, rf))
