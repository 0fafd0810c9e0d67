"""Recorded audit and mine runs (the Session records them like ask's; `rlm show` draws them with
rlm.render.repo_markdown): `rlm resume RUN` finishes them (answered calls come from the call
cache, so only the jobs that failed or never finished call the model)."""

from __future__ import annotations


def resume_options(recorded: dict, run_id: str, overrides: dict, argv: list[str] | None):
    """AuditOptions or MineOptions of a recorded audit or mine, to finish it (``resume``):
    the recorded options, minus what is never stored, plus the overrides given."""
    from dataclasses import fields

    from rlm.repo.audit.options import AuditOptions
    from rlm.repo.mine.options import MineOptions

    cls = AuditOptions if recorded.get("command") == "audit" else MineOptions
    names = {f.name for f in fields(cls)}
    kw = {k: v for k, v in recorded.items()
          if k in names and k not in ("api_key", "resume", "argv", "dry_run")}
    if "lenses" in kw:
        kw["lenses"] = tuple(kw["lenses"])
    kw.update({k: v for k, v in overrides.items() if v is not None})
    return cls(**kw, resume=run_id, argv=argv)


async def resume_async(recorded: dict, opts, on_event=None, handle_sigint: bool = False):
    """Run a recorded audit or mine again with ``opts`` (see :func:`resume_options`)."""
    repo = recorded.get("path_abs") or ""
    if recorded.get("command") == "audit":
        from rlm.repo.audit.run import audit_async

        return await audit_async(repo, opts, on_event=on_event, handle_sigint=handle_sigint)
    from rlm.repo.mine.run import mine_async

    return await mine_async(repo, list(recorded.get("questions") or []), opts, on_event=on_event,
                            handle_sigint=handle_sigint)


def load_report(data: dict):
    """A recorded audit or mine report as its type (ValueError when it does not validate)."""
    from rlm.schemas.repo_report import AuditReport, MineReport

    return (AuditReport if data.get("command") == "audit" else MineReport).model_validate(data)
