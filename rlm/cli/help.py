"""How `rlm --help` reads: usage names arguments as `PATH QUESTION` (typer writes
`{path} {question}`), and flags and arguments carry no `<bool>` / `<str>` placeholder as if they
took a typed value. Typer builds its parameter objects itself, so the two display hooks are set
once on its classes, for this process (the CLI) only."""

from __future__ import annotations

_done = False


def readable_help() -> None:
    global _done
    if _done:
        return
    from typer import core

    option_type = core.TyperOption.display_type_rich

    def option_display(self, ctx):  # a flag takes no value: show none
        return None if self.is_flag else option_type(self, ctx)

    def argument_usage(self) -> str:  # PATH, [PATH], PATH...
        name = (self.metavar or self.name or "").upper()
        name = name if self.required else f"[{name}]"
        return name + ("..." if self.nargs != 1 else "")

    core.TyperOption.display_type_rich = option_display
    core.TyperArgument.display_type_rich = lambda self, ctx: None  # its name says what it is
    core.TyperArgument._usage_display_name = argument_usage
    _done = True


def one_line_usage_errors() -> None:
    """A usage error (a bad option value, a missing argument, an unknown command) is one line on
    stderr, like every other bad input, instead of typer's usage box; the exit code stays 2."""
    import sys

    from typer import rich_utils

    def one_line(e) -> None:
        if type(e).__name__ == "NoArgsIsHelpError":  # typer printed the help already
            return
        ctx = getattr(e, "ctx", None)
        path = ctx.command_path if ctx is not None else "rlm"
        where = path.removeprefix("rlm").strip()
        msg = " ".join(str(e.format_message()).split())
        sys.stderr.write(f"rlm: {where + ': ' if where else ''}{msg} (see `{path} --help`)\n")

    rich_utils.rich_format_error = one_line
