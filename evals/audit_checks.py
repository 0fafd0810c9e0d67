"""Independent checks of analyzer findings, one per rule: does what the rule says hold at the
cited line? Written from each rule's documented meaning with Python's ast and a word search, not
by calling the analyzer again. ``None``: no script check for that rule (judged by hand only).

Used by evals/bench_audit_views.py."""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

PASSWORDISH = re.compile(r"(?i)(^|_)(pas+wo?r?d|pass(phrase)?|pwd|token|secrete?)($|_)")


@lru_cache(maxsize=None)
def _tree(path: str) -> ast.Module:
    return ast.parse(Path(path).read_text("utf-8", errors="replace"))


@lru_cache(maxsize=None)
def _loads(root: str) -> set[str]:
    """Every name read anywhere in the repository's code (a Name or an attribute, loaded)."""
    out: set[str] = set()
    for p in Path(root).rglob("*.py"):
        try:
            tree = ast.parse(p.read_text("utf-8", errors="replace"))
        except SyntaxError:
            continue
        for n in ast.walk(tree):
            if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store):
                out.add(n.id)
            elif isinstance(n, ast.Attribute) and not isinstance(n.ctx, ast.Store):
                out.add(n.attr)
    return out


def _at(tree: ast.AST, line: int, kinds) -> list:
    return [n for n in ast.walk(tree) if isinstance(n, kinds) and getattr(n, "lineno", 0) == line]


def _dotted(n: ast.AST) -> str:
    if isinstance(n, ast.Name):
        return n.id
    if isinstance(n, ast.Attribute):
        return f"{_dotted(n.value)}.{n.attr}"
    return ""


def _kw(call: ast.Call, name: str):
    return next((k.value for k in call.keywords if k.arg == name), None)


def _ticked(message: str) -> str:
    m = re.search(r"`([^`]+)`", message) or re.search(r"'([^']+)'", message)
    return m.group(1) if m else ""


def _bound(tree: ast.Module) -> set[str]:
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            out.add(n.id)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            out |= {(a.asname or a.name).split(".")[0] for a in n.names if a.name != "*"}
        elif isinstance(n, ast.arg):
            out.add(n.arg)
    return out


def check(root: Path, f: dict) -> bool | None:
    path = str(root / f["path"])
    tree, line, rule, msg = _tree(path), f["line"], f["rule"], f["message"]
    text = Path(path).read_text("utf-8", errors="replace").splitlines()[line - 1]
    calls = _at(tree, line, ast.Call)
    names = [_dotted(c.func) for c in calls]
    if rule == "F403":
        return bool(re.search(r"\bimport\s+\*", text))
    if rule == "F405":
        name = _ticked(msg)
        has_star = any(isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names)
                       for n in ast.walk(tree))
        return has_star and name not in _bound(tree)
    if rule == "F401":
        full = _ticked(msg)
        stmt = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
                and n.lineno <= line <= n.end_lineno]  # ruff cites the name's own line
        if not stmt:
            return False
        alias = next((a for a in stmt[0].names if full.endswith(a.name) or a.asname == full
                      or full == a.name), None)
        if alias is None:
            return False
        b = alias.asname or (alias.name.split(".")[0] if isinstance(stmt[0], ast.Import)
                             else alias.name)
        loads = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == b
                 and isinstance(n.ctx, ast.Load)]
        in_all = any(isinstance(n, ast.Constant) and n.value == b for n in ast.walk(tree)
                     if isinstance(n, ast.Constant) and n.lineno != line)
        return not loads and not in_all
    if rule == "S113":
        return any(n.split(".")[-1] in ("get", "post", "put", "patch", "delete", "head",
                                        "options", "request") and _kw(c, "timeout") is None
                   for n, c in zip(names, calls))
    if rule == "S301":
        return any("pickle" in n or n.endswith(("loads", "load", "Unpickler")) for n in names)
    if rule == "S324":
        return any(n.split(".")[-1] in ("md5", "sha1", "new", "md4") and
                   not (isinstance(_kw(c, "usedforsecurity"), ast.Constant)
                        and _kw(c, "usedforsecurity").value is False)
                   for n, c in zip(names, calls))
    if rule in ("S105", "S106", "S107"):
        lits = [n for n in ast.walk(tree) if isinstance(n, ast.Constant)
                and isinstance(n.value, str) and n.lineno == line and n.value]
        named = bool(PASSWORDISH.search(text.split("=")[0].strip().split("(")[-1].strip()))
        kw_named = any(k.arg and PASSWORDISH.search(k.arg) for c in calls for k in c.keywords)
        return bool(lits) and (named or kw_named or rule == "S107")
    if rule in ("S603", "S607"):
        sub = [c for n, c in zip(names, calls) if n.startswith("subprocess.")]
        if rule == "S603":
            return bool(sub)
        return any(c.args and isinstance(c.args[0], (ast.List, ast.Tuple)) and c.args[0].elts
                   and isinstance(c.args[0].elts[0], ast.Constant)
                   and "/" not in str(c.args[0].elts[0].value) for c in sub) or bool(
            re.search(r"""\(\s*\[?\s*["'][^/"']+["']""", text))
    if rule == "S606":
        return any(n.startswith("os.") and ("spawn" in n or "exec" in n or n == "os.startfile")
                   for n in names)
    if rule == "S110":
        return any(len(h.body) == 1 and isinstance(h.body[0], ast.Pass)
                   for h in _at(tree, line, ast.ExceptHandler))
    if rule == "S108":
        return bool(re.search(r"""["']/(var/)?tmp\b""", text))
    if rule == "S311":
        return any(n.startswith("random.") for n in names)
    if rule == "B904":
        raises = [n for n in ast.walk(tree) if isinstance(n, ast.ExceptHandler)
                  for r in ast.walk(n) if isinstance(r, ast.Raise) and r.lineno == line
                  and r.exc is not None and r.cause is None]
        return bool(raises)
    if rule == "B028":
        return any(n.endswith("warn") and _kw(c, "stacklevel") is None for n, c in zip(names, calls))
    if rule == "B018":
        return any(isinstance(s.value, (ast.Attribute, ast.Name, ast.Constant, ast.Tuple))
                   for s in _at(tree, line, ast.Expr))
    if rule in ("B009", "B010"):
        fn = "getattr" if rule == "B009" else "setattr"
        return any(n == fn and len(c.args) >= 2 and isinstance(c.args[1], ast.Constant)
                   for n, c in zip(names, calls))
    if rule == "B017":
        return bool(re.search(r"raises\(\s*Exception\s*\)|assertRaises\(\s*Exception\s*\)", text))
    if rule == "unused-variable":
        name = _ticked(msg)
        fns = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
               and n.lineno <= line <= n.end_lineno]
        if fns:  # a local or an argument: no read of it in its function
            fn = min(fns, key=lambda n: n.end_lineno - n.lineno)
            return not any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
                           for n in ast.walk(fn))
        return name not in _loads(str(root))
    if rule.startswith("unused-") and rule != "unused-unreachable-code":
        name = _ticked(msg).split(".")[-1]
        return bool(name) and name not in _loads(str(root))
    if rule == "unused-unreachable-code":
        prev = [n for n in ast.walk(tree) if isinstance(n, ast.stmt) and hasattr(n, "end_lineno")
                and n.end_lineno < line and isinstance(n, (ast.Raise, ast.Return, ast.Continue,
                                                           ast.Break))]
        return bool(prev)
    return None
