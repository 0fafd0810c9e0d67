"""The audit's code facts: what rlm.repo.facts states exactly, as checked findings.

They come first in every audit (round 0, before any model round) and are never replaced: the
seen-set holds them, so a model finding on the same lines is not new. Each fact's evidence is
taken from the file by rlm.verify.evidence at the line code found it on; a fact whose line does not
check out (a file changed under the scan) is counted as rejected, not kept. With no model they
are the whole audit.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from rlm.verify import evidence
from rlm.codeview.severity import rate
from rlm.verify.evidence import format_evidence_path
from rlm.repo.facts import Fact, RepoFacts, repo_facts
from rlm.schemas.report import Source
from rlm.schemas.repo_report import AuditFinding

if TYPE_CHECKING:
    from rlm.repo.audit.state import AuditState

CHUNK = "code"  # the `chunk` of a code fact: no model call produced it
LENS = {"entry_point": "entry points", "dependency": "dependencies", "test": "tests",
        "test_inferred": "tests",
        "marker": "todo", "risk": "risks", "large_function": "complexity"}


def severity(f: Fact) -> str:
    """rlm's own risk rules (used when ruff is not installed) take the level bandit gives the
    same check (rlm.codeview.severity), never a level read from the names in the code."""
    return rate(f.detail.get("rule") or "S", f.claim)[0]


def module_of(st: AuditState, path: str) -> str:
    for m in st.modules:
        if any(x.path == path for x in m.files):
            return m.name
    return path.rsplit("/", 1)[0] if "/" in path else "(root)"


def _cited(f: Fact) -> tuple[int, int]:
    """The lines a finding cites: the fact's first line for spans (a function, a test), so a
    long span does not hide the other facts and risks inside it; the span is in the claim."""
    if f.kind in ("large_function", "test") and f.line_end > f.line_start:
        return f.line_start, f.line_start
    return f.line_start, f.line_end


def _claim(f: Fact) -> str:
    if f.kind == "large_function":
        return f"{f.claim} (lines {f.line_start}-{f.line_end})"
    if f.kind == "test" and f.detail.get("defined_at"):
        return f"{f.claim} (defined at {', '.join(f.detail['defined_at'][:4])})"
    return f.claim


def _note(f: Fact) -> str:
    if f.kind == "test_inferred":  # the line is checked; the link is not: say why
        return f"inferred, not verified: {f.detail['link']['reason']}"
    if f.kind == "test":
        return "found by code (tests): each call resolved through imports and types"
    return f"found by code ({f.kind.replace('_', ' ')})"


def add_code_facts(st: AuditState, facts: RepoFacts | None = None,
                   skip: frozenset[str] = frozenset()) -> int:
    """Check every repo fact on a kept file and add it to the findings; returns how many.
    ``skip``: fact kinds another source gives (risks, when ruff ran)."""
    facts = facts or repo_facts(st.corpus.root)
    st.links = facts.link_counts()
    n, seen = 0, {(g.evidence_path, g.claim) for g in st.findings.items}
    for f in facts.facts:
        if f.path not in st.corpus.by_path or f.kind in skip:
            continue  # a file the walker left out (ignored, vendored, generated)
        a, b = _cited(f)
        first = next((ln.strip() for ln in st.corpus.lines(f.path)[a - 1:b] if ln.strip()), "")
        ev = evidence.check(st.corpus.root, format_evidence_path(f.path, a, b), first)
        st.findings.stats.add(ev)
        claim = _claim(f)
        if not ev.ok or (ev.evidence_path, claim) in seen:
            continue
        seen.add((ev.evidence_path, claim))
        kind = "risk" if f.kind == "risk" else "fact"
        st.findings.items.append(AuditFinding(
            id=f"f{len(st.findings.items) + 1}", claim=claim, evidence=ev.text,
            source=Source(path=ev.path, line_start=ev.line_start, line_end=ev.line_end),
            verified=f.kind != "test_inferred", chunk=CHUNK, label=f.kind,
            group=module_of(st, f.path), note=_note(f), kind=kind,
            module=module_of(st, f.path), severity=severity(f) if kind == "risk" else None,
            lens=LENS.get(f.kind, f.kind), round=0, evidence_path=ev.evidence_path,
            quote=first[:200], status=ev.status))
        n += 1
    for rel in facts.unparsed:
        st.declared.append(f"code could not parse {rel}")
    return n


def public_apis(st: AuditState) -> None:
    """Key APIs of each module by code: its files' public top-level functions and classes
    (``__all__`` first when a file declares one); a model's names are added after them."""
    for m in st.modules:
        names: list[str] = []
        for fe in m.files:
            if not fe.path.endswith(".py") or fe.path.rsplit("/", 1)[-1].startswith("test"):
                continue
            tree = _tree(st, fe.path)
            if tree is not None:
                names.extend(public_names(tree))
        if names:
            st.apis.setdefault(m.name, [])[:0] = names


def _tree(st: AuditState, rel: str) -> ast.Module | None:
    """The views' parse of the file when the audit made one, else a parse of its own."""
    if st.sources is not None and rel in st.sources.files:
        return st.sources.tree(rel)
    try:
        return ast.parse("\n".join(st.corpus.lines(rel)))
    except (SyntaxError, ValueError):
        return None


def public_names(tree: ast.Module) -> list[str]:
    """``__all__`` when the module declares one, else its public top-level defs and classes."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__"
                                                for t in node.targets):
            if isinstance(node.value, (ast.List, ast.Tuple)):
                return [e.value for e in node.value.elts
                        if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return [n.name for n in tree.body
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and not n.name.startswith("_")]
