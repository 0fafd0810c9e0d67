"""Entry points: console and GUI scripts from the packaging metadata, and what rlm.repo.facts
finds in the code (``__main__`` modules and guards, typer/click/argparse commands, HTTP
routes)."""

from __future__ import annotations

from rlm.codeview.packaging import Metadata
from rlm.codeview.shapes import EntryPoint, EntryPoints
from rlm.repo.facts import RepoFacts

KINDS = {"console_script", "main_module", "main_guard", "cli_command", "http_route"}


def build_entry_points(md: Metadata, facts: RepoFacts) -> EntryPoints:
    sec = EntryPoints(produced_by="rlm (packaging metadata + Python ast)", not_looked_at=[
        "entry-point groups other than console and GUI scripts (plugins)",
        "commands registered at run time (add_command in a loop, app.add_url_rule)"])
    seen: set[tuple[str, str]] = set()
    for s in md.scripts:
        seen.add((s.kind, s.name))
        sec.items.append(s)
    for f in facts.of("entry_point"):
        kind = f.detail.get("kind2", "")
        if kind not in KINDS:
            continue
        name = (f.claim.removeprefix("HTTP ").split(" -> ")[0] if kind == "http_route"
                else f.path if kind == "main_guard" else _name(f.claim))
        if kind == "console_script" and ("console_script", name) in seen:
            continue  # pyproject's script, already listed from the metadata
        sec.items.append(EntryPoint(kind=kind, name=name, target=_target(f.claim), path=f.path,
                                    line=f.line_start))
    if not sec.items:
        sec.status, sec.note = "ok", "no entry point found"
    return sec


def _name(claim: str) -> str:
    """The name inside the first backticks of repo_facts' claim, else the claim itself."""
    parts = claim.split("`")
    return parts[1] if len(parts) > 2 else claim


def _target(claim: str) -> str:
    if "__main__ guard" in claim:
        return ""
    return claim.split(" runs ", 1)[1] if " runs " in claim else (
        claim.split(" -> ", 1)[1] if " -> " in claim else "")
