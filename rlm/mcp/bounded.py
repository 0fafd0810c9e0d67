"""Bounded looks at evidence for agents: `grep` and `read_lines`. Code only, no model call.

Every answer states its bounds and declares each cut (hits beyond max_hits, long lines, a line
range longer than the limit), so an agent never mistakes a cut list for the whole.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, Field

from rlm.corpus.source import TextSource
from rlm.errors import UsageError

GREP_DEFAULT_HITS = 50
GREP_MAX_HITS = 500
READ_MAX_LINES = 400
LINE_MAX_CHARS = 500  # grep hit lines
READ_LINE_MAX_CHARS = 2000  # read_lines lines
RE2_MAX_MEM = 64 << 20  # compiled-pattern memory; a bigger pattern is refused


class Line(BaseModel):
    path: str
    line: int = Field(description="1-based line number in the original file")
    text: str
    cut: bool = Field(False, description="the line was longer than the bound and is shown cut")


class GrepResult(BaseModel):
    path: str
    pattern: str
    hits: list[Line]
    hits_total: int = Field(description="matching lines in all files searched, shown or not")
    files_searched: int
    bytes_searched: int
    truncated: bool = Field(description="more matching lines than max_hits: only the first are shown")
    bounds: str
    statement: str


class LinesResult(BaseModel):
    path: str
    start: int
    end: int
    total_lines: int
    lines: list[Line]
    bounds: str
    statement: str


def _compile(pattern: str):
    """The agent's pattern on RE2: linear time in the text whatever the pattern, so `(a+)+$`
    cannot hang the server (Python's backtracking `re` takes exponential time on it and holds
    the GIL, stalling every other request). A pattern needing backtracking (lookarounds,
    backreferences) or too big to compile in RE2_MAX_MEM is a one-line error."""
    import re2

    if not pattern:
        raise UsageError("the pattern is empty")
    opts = re2.Options()
    opts.log_errors = False  # stderr is the server's log; the error goes back to the agent
    opts.max_mem = RE2_MAX_MEM
    try:
        return re2.compile(b"(?m)" + pattern.encode("utf-8"), opts)
    except re2.error as e:
        why = e.args[0].decode("utf-8", "replace") if e.args and isinstance(e.args[0], bytes) \
            else str(e)
        why = why.replace("(?m)", "", 1)
        if "too large" in why or "too big" in why:
            raise UsageError(f"pattern {pattern[:200]!r} is too costly: it would need more than "
                             f"{RE2_MAX_MEM >> 20} MB compiled ({why}); use a simpler one") from None
        hint = ("; grep runs RE2 (no backtracking): lookarounds and backreferences are not "
                "supported" if _needs_backtracking(pattern) else "")
        raise UsageError(f"invalid regular expression {pattern[:200]!r}: {why}{hint}") from None


def _needs_backtracking(pattern: str) -> bool:
    return bool(re.search(r"\\[1-9]|\(\?<?[=!]|\(\?P=", pattern))


def _files(real: Path, shown_as: str) -> list[tuple[Path, str]]:
    if not real.is_dir():
        return [(real, shown_as)]
    from rlm.corpus.walk import walk  # symlinks are never followed

    res = walk(real)
    return [(real / fe.path, fe.path) for fe in res.files]


def grep(real: Path, shown_as: str, pattern: str, max_hits: int | None) -> GrepResult:
    """Matching lines of a file (or of the text files of a folder), first max_hits of them."""
    limit = min(max(1, max_hits or GREP_DEFAULT_HITS), GREP_MAX_HITS)
    rx = _compile(pattern)
    hits: list[Line] = []
    total = files = nbytes = 0
    for fp, display in _files(real, shown_as):
        try:
            src = TextSource.open(str(fp))
        except UsageError:
            continue
        with src:
            files += 1
            nbytes += src.size
            last = 0
            for m in rx.finditer(src.data):
                ln = src.line_of_offset(m.start())
                if ln == last:
                    continue
                last = ln
                total += 1
                if len(hits) < limit:
                    text = src.line(ln)
                    hits.append(Line(path=display, line=ln, text=text[:LINE_MAX_CHARS],
                                     cut=len(text) > LINE_MAX_CHARS))
    bounds = (f"at most {limit} matching lines (max_hits, up to {GREP_MAX_HITS}); each line cut "
              f"at {LINE_MAX_CHARS} characters; RE2 regular expressions (Python syntax without "
              "lookarounds or backreferences; linear time), case-sensitive unless the pattern "
              "starts with (?i)")
    cut = sum(h.cut for h in hits)
    st = f"{total:,} matching line(s) in {files} file(s) ({nbytes:,} bytes searched by code)"
    if total > len(hits):
        st += f"; only the first {len(hits)} are shown: the list is cut"
    if cut:
        st += f"; {cut} shown line(s) are cut at {LINE_MAX_CHARS} characters"
    return GrepResult(path=shown_as, pattern=pattern, hits=hits, hits_total=total,
                      files_searched=files, bytes_searched=nbytes, truncated=total > len(hits),
                      bounds=bounds, statement=st + ".")


def read_lines(real: Path, shown_as: str, start: int, end: int) -> LinesResult:
    """Lines start..end of one file, at most READ_MAX_LINES of them."""
    if real.is_dir():
        raise UsageError(f"{shown_as} is a folder: read_lines reads one file")
    if start < 1 or end < start:
        raise UsageError(f"bad line range {start}-{end}: lines are 1-based and start <= end")
    with TextSource.open(str(real)) as src:
        n = src.line_count
        notes = []
        stop = min(end, n, start + READ_MAX_LINES - 1)
        if start > n:
            raise UsageError(f"{shown_as} has {n:,} lines; line {start} does not exist")
        if end > n:
            notes.append(f"the file ends at line {n:,}")
        if end > start + READ_MAX_LINES - 1 and stop < min(end, n):
            notes.append(f"only {READ_MAX_LINES} lines are returned per call: lines {stop + 1}-"
                         f"{min(end, n)} were not shown (call again from {stop + 1})")
        texts = src.lines(start, stop)
    lines = [Line(path=shown_as, line=start + i, text=t[:READ_LINE_MAX_CHARS],
                  cut=len(t) > READ_LINE_MAX_CHARS) for i, t in enumerate(texts)]
    cut = sum(x.cut for x in lines)
    if cut:
        notes.append(f"{cut} line(s) are cut at {READ_LINE_MAX_CHARS} characters")
    st = f"lines {start}-{stop} of {n:,}" + ("; " + "; ".join(notes) if notes else "") + "."
    bounds = f"at most {READ_MAX_LINES} lines per call, each cut at {READ_LINE_MAX_CHARS} characters"
    return LinesResult(path=shown_as, start=start, end=stop, total_lines=n, lines=lines,
                       bounds=bounds, statement=st)
