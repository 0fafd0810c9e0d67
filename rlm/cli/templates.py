"""`rlm templates PATH`: the template table of a log (or a folder of logs), by code only."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import orjson
import typer
from rich.console import Console

from rlm.cli.base import JsonOpt, _run, app


@app.command("templates")
def templates_cmd(
    path: str = typer.Argument(..., help="a log file, a folder of logs, or - for stdin"),
    json_out: bool = JsonOpt,
    assign: Optional[Path] = typer.Option(
        None, "--assign", help="write one template id per input line to this file (0: a line "
                               "whose shape was not tracked)"),
) -> None:
    """The log's event kinds: id, template (variables as <*>), exact count, first and last
    line and time, severity. No model is used."""
    from rlm.render.templates import table_json, table_text

    def go():
        from rlm.corpus.logset import LogSet
        from rlm.corpus.open import open_corpus
        from rlm.corpus.templates import build_table

        corpus = open_corpus(path)
        try:
            srcs = corpus.sources
            src = srcs[0] if len(srcs) == 1 else LogSet(srcs)
            table = build_table(src)
            if assign is not None:
                _write_assignment(table, src, assign)
            return table_json(table, src) if json_out else table_text(table, src)
        finally:
            corpus.close()

    out = _run(go)
    if json_out:
        print(orjson.dumps(out, option=orjson.OPT_INDENT_2).decode())
    else:
        Console(highlight=False, soft_wrap=True).print(out, markup=False)


def _write_assignment(table, src, dest: Path) -> None:
    from rlm.errors import UsageError

    try:
        with open(dest, "w", encoding="ascii") as fh:
            buf = []
            for tid in table.assign(src):
                buf.append(f"{tid}\n")
                if len(buf) >= 65536:
                    fh.write("".join(buf))
                    buf.clear()
            fh.write("".join(buf))
    except OSError as e:
        raise UsageError(f"cannot write {dest}: {e.strerror or e}") from None
