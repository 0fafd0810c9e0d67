"""A model's claim about what a test exercises, checked the way code checks its own links.

A model that cites a line inside a test and names a package definition ("`test_read` checks
`Response.read`") makes a link claim. The quote at the line proves where, not what
(principle 10): the claim is kept verified only when code resolved a call of that test to a
definition of that name (rlm.repo.links). Otherwise the reason says what code found instead.
Claims that name no package definition, or cite no test, are left to rlm.verify.claim_support.
"""

from __future__ import annotations

import ast
import re
from functools import cached_property
from pathlib import Path

from rlm.corpus.beneath import read_text
from rlm.repo.links import TestLinks, build_resolver
from rlm.repo.facts import _is_test, _py_files

# names written as code: `in backticks`, dotted (Response.read), snake_case, camelCase, or called
_CODE = re.compile(r"`([A-Za-z_][\w.]*)(?:\(\))?`|\b([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|"
                   r"[a-z]\w*_\w+|[a-z]+[A-Z]\w*)\b|\b([A-Za-z_]\w*)\(")


def code_names(claim: str) -> list[str]:
    return [a or b or c for a, b, c in _CODE.findall(claim)]


class LinkClaims:
    """Resolved test links of one repository, built on first use (claims on test lines only)."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    @cached_property
    def _resolved(self) -> tuple[dict[str, list[TestLinks]], set[str]]:
        trees: dict[str, ast.Module] = {}
        for p in _py_files(self.root):
            rel = p.relative_to(self.root).as_posix()
            try:
                trees[rel] = ast.parse(read_text(p))  # opened beneath the roots, as repo_facts
            except (SyntaxError, ValueError):
                continue
        pkg = self.root.resolve().name if (self.root / "__init__.py").is_file() else ""
        resolver = build_resolver(trees, _is_test, pkg)
        by_path: dict[str, list[TestLinks]] = {}
        for rel, tree in trees.items():
            if _is_test(rel):
                by_path[rel] = resolver.test_links(rel, tree)
        names = {q for ds in resolver.index.names.values() for d in ds
                 if d.path in resolver.package_paths for q in (d.name, d.qualname)}
        return by_path, names

    def check(self, claim: str, path: str, line: int) -> str | None:
        """None when the claim stands (or is not a link claim); else why it is not verified."""
        if not _is_test(path):
            return None
        by_path, package_names = self._resolved
        test = next((t for t in by_path.get(path, [])
                     if t.line_start <= line <= t.line_end), None)
        if test is None:
            return None
        named = [w for w in code_names(claim)
                 if w in package_names and w not in test.name.split(".")]
        if not named:
            return None
        ok = {x.target.qualname for x in test.of("verified")}
        ok |= {q.rsplit(".", 1)[-1] for q in ok}
        missing = [w for w in named if w not in ok]
        if not missing:
            return None
        inferred = [x for x in test.of("inferred")
                    if any(c.name == missing[0].rsplit(".", 1)[-1] for c in x.candidates)]
        if inferred:
            return (f"the claim names `{missing[0]}`, but code could not resolve that call in "
                    f"`{test.name}`: {inferred[0].reason}; not verified")
        found = ", ".join(f"`{q}`" for q in sorted({x.target.qualname
                                                    for x in test.of("verified")})[:4])
        return (f"the claim names `{missing[0]}`, but code resolved no call of `{test.name}` to "
                f"it (it resolved: {found or 'no package definition'}); not verified")
