"""What the packaging metadata declares: dependencies (with their extra or group) and console
scripts, from pyproject.toml ([project], [dependency-groups], Poetry), setup.cfg, setup.py's
literal ``setup(...)`` arguments and requirements*.txt. Each with its file and line."""

from __future__ import annotations

import ast
import configparser
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from rlm.codeview.shapes import DeclaredDep, EntryPoint
from rlm.repo.files import file_lines

_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


@dataclass
class Metadata:
    deps: list[DeclaredDep] = field(default_factory=list)
    scripts: list[EntryPoint] = field(default_factory=list)
    read: list[str] = field(default_factory=list)  # the files read
    unread: list[str] = field(default_factory=list)  # "path: why"


def dep_name(spec: str) -> str | None:
    m = _NAME.match(spec)
    return m.group(1) if m else None


def read_metadata(root: Path) -> Metadata:
    md = Metadata()
    for name, reader in (("pyproject.toml", _pyproject), ("setup.cfg", _setup_cfg),
                         ("setup.py", _setup_py)):
        if (root / name).is_file():
            md.read.append(name)
            try:
                reader(root, name, md)
            except (ValueError, SyntaxError, configparser.Error) as e:
                md.unread.append(f"{name}: {type(e).__name__}: {str(e)[:120]}")
    for req in sorted(root.glob("requirements*.txt")):
        md.read.append(req.name)
        for i, ln in enumerate(file_lines(root, req.name), 1):
            s = ln.split("#", 1)[0].strip()
            if s and not s.startswith("-") and (n := dep_name(s)):
                md.deps.append(DeclaredDep(name=n, spec=s, group=req.name, path=req.name, line=i))
    return md


def _line_of(root: Path, rel: str, needle: str) -> int:
    for i, ln in enumerate(file_lines(root, rel), 1):
        if needle in ln:
            return i
    return 1


def _add(root: Path, rel: str, md: Metadata, specs, group: str) -> None:
    for spec in specs or []:
        if isinstance(spec, str) and (n := dep_name(spec)):
            md.deps.append(DeclaredDep(name=n, spec=spec.strip(), group=group, path=rel,
                                       line=_line_of(root, rel, spec.strip())))


def _script(root: Path, rel: str, md: Metadata, name: str, target: str, kind: str) -> None:
    md.scripts.append(EntryPoint(kind=kind, name=name, target=target, path=rel,
                                 line=_line_of(root, rel, target)))


def _pyproject(root: Path, rel: str, md: Metadata) -> None:
    data = tomllib.loads("\n".join(file_lines(root, rel)))
    proj = data.get("project", {})
    _add(root, rel, md, proj.get("dependencies"), "")
    for extra, specs in (proj.get("optional-dependencies") or {}).items():
        _add(root, rel, md, specs, extra)
    for group, specs in (data.get("dependency-groups") or {}).items():
        _add(root, rel, md, [s for s in specs if isinstance(s, str)], f"group {group}")
    for kind, key in (("console_script", "scripts"), ("gui_script", "gui-scripts")):
        for name, target in (proj.get(key) or {}).items():
            _script(root, rel, md, name, str(target), kind)
    poetry = data.get("tool", {}).get("poetry", {})
    for name, spec in (poetry.get("dependencies") or {}).items():
        if name.lower() != "python":
            md.deps.append(DeclaredDep(name=name, spec=f"{name} {spec}", path=rel,
                                       line=_line_of(root, rel, name)))
    for name, target in (poetry.get("scripts") or {}).items():
        _script(root, rel, md, name, str(target), "console_script")


def _setup_cfg(root: Path, rel: str, md: Metadata) -> None:
    cp = configparser.ConfigParser(interpolation=None)
    cp.read_string("\n".join(file_lines(root, rel)))
    if cp.has_option("options", "install_requires"):
        _add(root, rel, md, _cfg_list(cp.get("options", "install_requires")), "")
    if cp.has_section("options.extras_require"):
        for extra, val in cp.items("options.extras_require"):
            _add(root, rel, md, _cfg_list(val), extra)
    if cp.has_option("options.entry_points", "console_scripts"):
        for row in _cfg_list(cp.get("options.entry_points", "console_scripts")):
            name, _, target = row.partition("=")
            _script(root, rel, md, name.strip(), target.strip(), "console_script")


def _cfg_list(val: str) -> list[str]:
    return [x.strip() for x in val.replace(";", "\n").splitlines() if x.strip()]


def _setup_py(root: Path, rel: str, md: Metadata) -> None:
    """Only literal values (or a module-level name bound to one) of ``setup(...)``'s
    install_requires, extras_require and entry_points; anything computed is declared unread."""
    tree = ast.parse("\n".join(file_lines(root, rel)))
    names = {t.id: n.value for n in tree.body if isinstance(n, ast.Assign)
             for t in n.targets if isinstance(t, ast.Name)}
    call = next((n for n in ast.walk(tree) if isinstance(n, ast.Call)
                 and getattr(n.func, "id", getattr(n.func, "attr", "")) == "setup"), None)
    if call is None:
        md.unread.append(f"{rel}: no setup(...) call")
        return
    for kw in call.keywords:
        if kw.arg not in ("install_requires", "extras_require", "entry_points"):
            continue
        node = names.get(kw.value.id, kw.value) if isinstance(kw.value, ast.Name) else kw.value
        try:
            value = ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError):
            md.unread.append(f"{rel}: {kw.arg} is computed, not a literal")
            continue
        if kw.arg == "install_requires":
            _add(root, rel, md, value, "")
        elif kw.arg == "extras_require" and isinstance(value, dict):
            for extra, specs in value.items():
                _add(root, rel, md, specs, str(extra))
        elif kw.arg == "entry_points" and isinstance(value, dict):
            for row in value.get("console_scripts", []):
                name, _, target = str(row).partition("=")
                _script(root, rel, md, name.strip(), target.strip(), "console_script")
