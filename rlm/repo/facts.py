"""Facts about a Python repository that code can state exactly, with checked path:line evidence.

No model reads anything here. For `rlm audit` / `rlm mine` with no model (or before one):

- entry points: console scripts (pyproject / setup.cfg), ``__main__`` modules and guards, CLI
  commands (typer/click decorators, argparse sub-commands) and HTTP routes (Flask/FastAPI style);
- dependencies declared in pyproject.toml and requirements*.txt;
- tests and the package definitions they call, resolved through imports and types
  (rlm.repo.links: what behaviour is pinned by tests);
- TODO/FIXME/XXX/HACK markers;
- risky calls: eval/exec, shell=True, pickle/marshal loads, yaml.load without a safe loader,
  TLS verification disabled, hard-coded credentials;
- the largest functions (lines) with their branch count.

Each fact carries the file's own text at its lines as evidence (taken by code, never written).
Files that do not parse are listed, not guessed at.
"""

from __future__ import annotations

import ast
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from rlm.corpus.lines import read_lines
from rlm.corpus.beneath import read_text
from rlm.repo.links import TestLinks, link_counts, resolve_test_links

SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "build", "dist", "vendor", "__pycache__",
             ".tox", ".mypy_cache", "site-packages"}
MAX_FILE_BYTES = 1_000_000
_MARK = re.compile(r"#.*?\b(TODO|FIXME|XXX|HACK)\b[:\s]*(.*)")
_CRED = re.compile(r"(?i)^(?:.*_)?(password|passwd|secret|api_?key|token|access_?key)$")
_ROUTE_METHODS = {"get", "post", "put", "patch", "delete", "route", "websocket", "head", "options"}


@dataclass
class Fact:
    kind: str  # entry_point | dependency | test | marker | risk | large_function
    claim: str
    path: str
    line_start: int
    line_end: int
    evidence: str = ""
    detail: dict = field(default_factory=dict)


@dataclass
class RepoFacts:
    root: str
    files: int = 0
    facts: list[Fact] = field(default_factory=list)
    unparsed: list[str] = field(default_factory=list)  # "path: reason"
    links: list[TestLinks] = field(default_factory=list)  # tests -> definitions (rlm.repo.links)

    def link_counts(self) -> dict[str, int]:
        return link_counts(self.links)

    def of(self, kind: str) -> list[Fact]:
        return [f for f in self.facts if f.kind == kind]


def _py_files(root: Path) -> list[Path]:
    out = []
    for p in sorted(root.rglob("*.py")):
        rel = p.relative_to(root).parts
        if any(part in SKIP_DIRS or part.startswith(".") for part in rel[:-1]):
            continue
        if p.is_file() and p.stat().st_size <= MAX_FILE_BYTES:
            out.append(p)
    return out


def _is_test(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return name.startswith("test_") or name.endswith("_test.py") or "/tests/" in f"/{rel}"


def _name(node: ast.AST) -> str:
    """Dotted name of a call target or decorator: `subprocess.run`, `app.get`."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _name(node.value)
        return f"{base}.{node.attr}" if base else node.attr
    if isinstance(node, ast.Call):
        return _name(node.func)
    return ""


def _kw(call: ast.Call, name: str) -> ast.AST | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _const(node: ast.AST | None):
    return node.value if isinstance(node, ast.Constant) else None


class _Scan:
    def __init__(self, root: Path):
        self.root = root
        self.res = RepoFacts(str(root))
        self.lines: dict[str, list[str]] = {}

    def fact(self, kind: str, claim: str, rel: str, a: int, b: int | None = None, **detail) -> None:
        b = b or a
        if kind == "risk" and _is_test(rel):
            detail["in_test"] = True  # a test's own fixture value, most likely
        src = self.lines.get(rel, [])
        ev = "\n".join(src[a - 1:min(b, a + 4)])[:600]
        self.res.facts.append(Fact(kind, claim, rel, a, b, ev, detail))

    # -- metadata files ------------------------------------------------------------------------
    def metadata(self) -> None:
        pp = self.root / "pyproject.toml"
        if pp.is_file():
            rel = "pyproject.toml"
            text = read_text(pp)
            self.lines[rel] = list(read_lines(pp))
            try:
                data = tomllib.loads(text)
            except tomllib.TOMLDecodeError as e:
                self.res.unparsed.append(f"{rel}: {e}")
                data = {}
            proj = data.get("project", {})
            for name, target in (proj.get("scripts") or {}).items():
                self.fact("entry_point", f"console script `{name}` runs {target}", rel,
                          self._line_of(rel, str(target)), kind2="console_script")
            for dep in proj.get("dependencies") or []:
                self.fact("dependency", f"depends on {dep}", rel, self._line_of(rel, dep))
            for extra, deps in (proj.get("optional-dependencies") or {}).items():
                for dep in deps:
                    self.fact("dependency", f"optional ({extra}): {dep}", rel, self._line_of(rel, dep))
        for req in sorted(self.root.glob("requirements*.txt")):
            rel = req.name
            self.lines[rel] = list(read_lines(req))
            for i, ln in enumerate(self.lines[rel], 1):
                s = ln.split("#", 1)[0].strip()
                if s and not s.startswith("-"):
                    self.fact("dependency", f"depends on {s} ({rel})", rel, i)

    def _line_of(self, rel: str, needle: str) -> int:
        for i, ln in enumerate(self.lines.get(rel, []), 1):
            if needle in ln:
                return i
        return 1

    # -- python files --------------------------------------------------------------------------
    def python(self) -> None:
        files = _py_files(self.root)
        self.res.files = len(files)
        trees: dict[str, ast.Module] = {}
        for p in files:
            rel = p.relative_to(self.root).as_posix()
            text = read_text(p)
            # the one line reader (as rlm.verify.evidence reads): str.splitlines() would also split at
            # form feeds and U+2028, and every later line number would drift from the file's
            self.lines[rel] = list(read_lines(p))
            self.markers(rel)
            try:
                trees[rel] = ast.parse(text, filename=rel)
            except (SyntaxError, ValueError) as e:
                self.res.unparsed.append(f"{rel}: {type(e).__name__}: {e}")
        sizes = []
        for rel, tree in trees.items():
            if rel.endswith("__main__.py"):
                self.fact("entry_point", f"`python -m {rel[:-12].replace('/', '.')}` runs this module",
                          rel, 1, kind2="main_module")
            for node in ast.walk(tree):
                if isinstance(node, ast.If) and self._main_guard(node.test):
                    self.fact("entry_point", f"{rel} runs as a script (__main__ guard)", rel,
                              node.lineno, kind2="main_guard")
                elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self.decorated(rel, node)
                    if not _is_test(rel):
                        n = (node.end_lineno or node.lineno) - node.lineno + 1
                        branches = sum(isinstance(x, (ast.If, ast.For, ast.While, ast.Try,
                                                      ast.With, ast.BoolOp, ast.IfExp,
                                                      ast.comprehension))
                                       for x in ast.walk(node))
                        sizes.append((n, branches, rel, node))
                elif isinstance(node, ast.Call):
                    self.risky(rel, node)
                    if _name(node.func).endswith("add_parser") and node.args:
                        cmd = _const(node.args[0])
                        if isinstance(cmd, str):
                            self.fact("entry_point", f"argparse sub-command `{cmd}`", rel,
                                      node.lineno, kind2="cli_command")
                elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                    self.credential(rel, node)
        for n, br, rel, node in sorted(sizes, key=lambda x: (-x[0], x[2]))[:10]:
            self.fact("large_function", f"{node.name} is {n} lines with {br} branch"
                      f"{'' if br == 1 else 'es'}", rel,
                      node.lineno, node.end_lineno, lines=n, branches=br)
        self.tests(trees)

    @staticmethod
    def _main_guard(test: ast.AST) -> bool:
        return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name)
                and test.left.id == "__name__" and any(_const(c) == "__main__" for c in test.comparators))

    def decorated(self, rel: str, fn) -> None:
        for dec in fn.decorator_list:
            name = _name(dec)
            last = name.rsplit(".", 1)[-1]
            if last == "command" or name in ("click.command", "click.group") or last == "callback":
                self.fact("entry_point", f"CLI command `{fn.name}` ({name})", rel, fn.lineno,
                          kind2="cli_command")
                continue
            if last in _ROUTE_METHODS and "." in name and isinstance(dec, ast.Call) and dec.args:
                path = _const(dec.args[0])
                if isinstance(path, str) and path.startswith("/"):
                    verb = "ROUTE" if last == "route" else last.upper()
                    self.fact("entry_point", f"HTTP {verb} {path} -> {fn.name}", rel, fn.lineno,
                              kind2="http_route")

        if re.fullmatch(r"do_[A-Z]+", fn.name):  # http.server handlers: routes by path compare
            verb = fn.name[3:]
            paths = [c for node in ast.walk(fn) if isinstance(node, ast.Compare)
                     for c in (node.left, *node.comparators)
                     if isinstance(_const(c), str) and _const(c).startswith("/")]
            for c in paths or [fn]:
                path = _const(c) if paths else "(any path)"
                self.fact("entry_point", f"HTTP {verb} {path} -> {fn.name}", rel,
                          getattr(c, "lineno", fn.lineno), kind2="http_route")

    def risky(self, rel: str, call: ast.Call) -> None:
        """rlm's own rules, used when ruff is not installed; ``rule``: the ruff (bandit) code
        of the same check, whose severity rlm.codeview.severity gives."""
        name = _name(call.func)
        why = rule = None
        if name in ("eval", "exec"):
            why, rule = f"{name}() runs code built at run time", "S307" if name == "eval" else "S102"
        elif _const(_kw(call, "shell")) is True:
            why, rule = f"{name}(shell=True) runs a shell command line", (
                "S602" if name.startswith("subprocess.") else "S604")
        elif name in ("pickle.load", "pickle.loads", "marshal.load", "marshal.loads",
                      "cPickle.loads", "dill.loads"):
            why, rule = f"{name}() deserialises untrusted data unsafely", (
                "S302" if name.startswith("marshal") else "S301")
        elif name == "yaml.load" and not any(
                "Safe" in _name(k.value) for k in call.keywords if k.arg == "Loader"):
            why, rule = "yaml.load() without a safe Loader", "S506"
        elif _const(_kw(call, "verify")) is False:
            why, rule = f"{name}(verify=False) disables TLS certificate checks", "S501"
        elif name.endswith("_create_unverified_context"):
            why, rule = "an unverified TLS context", "S323"
        elif (name in ("hashlib.md5", "hashlib.sha1", "md5", "sha1")
              and _const(_kw(call, "usedforsecurity")) is not False):  # bandit's B324 rule
            why, rule = f"{name}() is a weak hash (unsafe for passwords and signatures)", "S324"
        if why:
            self.fact("risk", why, rel, call.lineno, call.end_lineno or call.lineno, call=name,
                      rule=rule)

    def credential(self, rel: str, node) -> None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        value = _const(node.value) if node.value is not None else None
        if not isinstance(value, str) or len(value) < 4 or " " in value:
            return
        for t in targets:
            tname = _name(t).rsplit(".", 1)[-1]
            if tname and _CRED.match(tname):
                self.fact("risk", f"hard-coded credential in `{tname}`", rel, node.lineno,
                          call="credential", rule="S105")

    def markers(self, rel: str) -> None:
        for i, ln in enumerate(self.lines[rel], 1):
            m = _MARK.search(ln)
            if m:
                self.fact("marker", f"{m.group(1)}: {m.group(2).strip()[:120]}", rel, i)

    def tests(self, trees: dict[str, ast.Module]) -> None:
        """Each test and the package definitions it calls, resolved through imports and types
        (rlm.repo.links): one `test` fact with its verified links, one `test_inferred` fact per
        call code could not resolve (with the reason); rejected calls are only counted."""
        root_pkg = self.root.resolve().name if (self.root / "__init__.py").is_file() else ""
        self.res.links = resolve_test_links(trees, _is_test, root_pkg)
        for t in self.res.links:
            ok = t.of("verified")
            if ok:
                names = [x.target.qualname for x in ok]
                self.fact("test", f"{t.name} exercises " + ", ".join(names), t.path,
                          t.line_start, t.line_end, calls=names,
                          defined_at=[x.target.where for x in ok],
                          links=[x.as_dict() for x in ok])
            for x in t.of("inferred"):
                self.fact("test_inferred", f"{t.name} may call one of " + ", ".join(
                    f"`{c.qualname}`" for c in x.candidates) + f" ({x.reason})", t.path, x.line,
                    x.line, test=t.name, link=x.as_dict())


def repo_facts(root: str | Path) -> RepoFacts:
    """Scan a repository (code only; no model): see the module docstring for what is found."""
    r = Path(root)
    s = _Scan(r)
    s.metadata()
    s.python()
    return s.res
