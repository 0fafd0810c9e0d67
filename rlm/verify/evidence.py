"""Evidence checking: models cite, code quotes.

A model's claim arrives with an evidence path (``path:12-20``) and, usually, a short quote.
Nothing the model says about the text is trusted: this module

1. parses the evidence path (:func:`parse_evidence_path`),
2. resolves it safely inside the corpus root (:func:`safe_resolve`: no absolute paths, no
   ``..``, no symlinks leading out, no folders, no missing files),
3. reads the file's lines itself (UTF-8 with replacement, ``.gz`` decompressed, cached), and
4. checks that the quote really is at the cited lines after whitespace normalisation
   (:func:`verify_lines`): *verified* when it is, *corrected* when it is a few lines away (the
   range is replaced by where it really is), *rejected* otherwise.

The evidence text that ends up in a report is always taken from the file by this code, never
from the model. Shared by ``rlm ask`` (one big file) and the repository recipes (audit, mine).

Line numbers are 1-based. A file's lines are its text split on ``\\n`` with a trailing ``\\r``
removed; a trailing newline does not start an extra line (the same convention as
:class:`rlm.corpus.source.TextSource`).

Everything here is pure code: no model calls, no global state other than a bounded cache of
file lines.
"""

from __future__ import annotations

import re
import stat as _stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Callable, Literal, Sequence

__all__ = [
    "EvidenceError",
    "EvidenceCheck",
    "EvidenceStats",
    "normalize_ws",
    "find_quote",
    "find_quote_spans",
    "parse_evidence_path",
    "format_evidence_path",
    "safe_resolve",
    "read_lines",
    "clear_cache",
    "verify_lines",
    "check",
    "TEXT_CAP",
]

Status = Literal["verified", "corrected", "rejected"]

WINDOW = 5  # lines around a citation where a quote is still accepted (corrected), every command
TEXT_CAP = 2000  # characters of evidence text kept in an EvidenceCheck
_TRUNCATION_MARK = " […]"
_ELSEWHERE_MAX_LINES = 100_000  # rejected quotes: look for them in the whole file up to this size


from rlm.errors import EvidenceError  # noqa: E402,F401 - raised here, defined with the others


# ------------------------------------------------------------------------------ normalisation
# Finding a quote in lines (whitespace-normalised) lives in rlm.corpus.quotes; re-exported.
from rlm.corpus.quotes import find_quote, find_quote_spans, normalize_ws  # noqa: E402,F401


# ------------------------------------------------------------------------------ evidence paths

_EVIDENCE_RE = re.compile(
    r"""^(?P<path>.+?)
        (?:
            :L?(?P<a>\d+)(?:\s*[-–—]\s*L?(?P<b>\d+))?        # path:12  path:12-20  path:L12-L20
          | \#L(?P<a2>\d+)(?:\s*[-–—]\s*L?(?P<b2>\d+))?     # path#L12  path#L12-L20  path#L12-20
        )$""",
    re.VERBOSE,
)


def parse_evidence_path(s: str) -> tuple[str, int, int]:
    """Split an evidence path into (path, start, end), 1-based inclusive.

    Accepted forms: ``path:12-20``, ``path:12`` (start == end), ``path#L12-L20``, ``path#L12``
    (also ``path:L12-L20`` and an en dash instead of the hyphen). Surrounding whitespace and
    backticks are ignored. Anything else raises ValueError with a message that names the input
    and the expected form.
    """
    if not isinstance(s, str):
        raise ValueError(f"evidence path must be a string, got {type(s).__name__}")
    raw = s.strip().strip("`").strip()
    m = _EVIDENCE_RE.match(raw)
    if not m:
        raise ValueError(
            f"bad evidence path {s!r}: expected 'path:START-END', 'path:LINE' or 'path#LSTART-LEND'"
        )
    path = m.group("path").strip()
    a = m.group("a") or m.group("a2")
    b = m.group("b") or m.group("b2")
    start = int(a)
    end = int(b) if b is not None else start
    if not path:
        raise ValueError(f"bad evidence path {s!r}: the path is empty")
    if start < 1:
        raise ValueError(f"bad evidence path {s!r}: line numbers start at 1")
    if end < start:
        raise ValueError(f"bad evidence path {s!r}: end line {end} is before start line {start}")
    return path, start, end


def format_evidence_path(path: str, start: int, end: int) -> str:
    """The canonical form: ``path:start-end`` (``path:start`` when start == end)."""
    return f"{path}:{start}" if start == end else f"{path}:{start}-{end}"


def safe_resolve(root: Path, rel: str) -> Path:
    """Resolve ``rel`` (a path relative to ``root``) to an existing regular file inside ``root``.

    Raises EvidenceError for: an empty path, an absolute path (POSIX or Windows style), any
    ``..`` component, a NUL byte, a path (or a symlink along it) that resolves outside ``root``,
    a missing file, a folder, or something that is not a regular file. Returns the resolved
    (real) path. ``./`` prefixes and backslash separators are accepted.
    """
    if not isinstance(rel, str) or not rel.strip():
        raise EvidenceError("empty evidence path")
    rel = rel.strip()
    if "\x00" in rel:
        raise EvidenceError(f"{rel!r}: path contains a NUL byte")
    win = PureWindowsPath(rel)
    if PurePosixPath(rel).is_absolute() or win.is_absolute() or win.drive or rel[0] in "/\\":
        raise EvidenceError(f"{rel}: absolute paths are not accepted; cite a path inside the corpus")
    parts = PurePosixPath(rel.replace("\\", "/")).parts
    if ".." in parts:
        raise EvidenceError(f"{rel}: '..' is not accepted in an evidence path")
    try:
        real_root = Path(root).resolve(strict=True)
    except (OSError, RuntimeError) as e:
        raise EvidenceError(f"corpus root {root} cannot be resolved: {e}") from None
    candidate = real_root.joinpath(*parts)
    try:
        resolved = candidate.resolve(strict=False)  # follows symlinks as far as they exist
    except (OSError, RuntimeError) as e:  # symlink loops: RuntimeError before 3.13
        raise EvidenceError(f"{rel}: cannot be resolved ({e})") from None
    if resolved != real_root and not resolved.is_relative_to(real_root):
        raise EvidenceError(f"{rel}: resolves outside the corpus (symlink leading out)")
    try:
        st = resolved.stat()
    except FileNotFoundError:
        raise EvidenceError(f"{rel}: no such file") from None
    except OSError as e:
        raise EvidenceError(f"{rel}: cannot be read ({e.strerror or e})") from None
    if resolved.is_dir():
        raise EvidenceError(f"{rel}: is a folder, not a file")
    if not _stat.S_ISREG(st.st_mode):
        raise EvidenceError(f"{rel}: not a regular file")
    return resolved


# ------------------------------------------------------------------------------ reading lines
# The one whole-file line reader (cached) lives in rlm.corpus.lines; re-exported here.
from rlm.corpus.lines import clear_cache, read_lines  # noqa: E402,F401


# ------------------------------------------------------------------------------ results


@dataclass
class EvidenceCheck:
    """The outcome of checking one citation.

    status: "verified" (the quote is at the cited lines, or no quote was required and the range
            exists), "corrected" (the quote was found a few lines away; line_start/line_end now
            say where it really is, or a too-wide citation was narrowed to the quote), or
            "rejected" (bad path, range not in the file, quote not found, no quote when one was
            required). Only verified and corrected evidence may be presented as fact.
    path:   the cited path as given (relative to the root), or the raw evidence string when it
            could not even be parsed.
    line_start, line_end: 1-based inclusive; after a correction, the corrected range. 0 when
            the evidence path could not be parsed.
    text:   the lines' text *taken from the file*, joined with "\\n", capped at TEXT_CAP
            characters (a cut ends with " […]"); "" when the range is not in the file.
    reason: a human-readable explanation (empty for a plain verification).
    """

    status: Status
    path: str
    line_start: int
    line_end: int
    text: str
    reason: str = ""

    @property
    def ok(self) -> bool:
        """True when the evidence may be presented as fact (verified or corrected)."""
        return self.status != "rejected"

    @property
    def evidence_path(self) -> str:
        """The (possibly corrected) citation in canonical ``path:start-end`` form."""
        return format_evidence_path(self.path, self.line_start, self.line_end)


@dataclass
class EvidenceStats:
    """How many claims of a run were verified, corrected and rejected."""

    verified: int = 0
    corrected: int = 0
    rejected: int = 0

    def add(self, check: EvidenceCheck) -> EvidenceCheck:
        """Count one check; returns it so calls can be chained."""
        if check.status == "verified":
            self.verified += 1
        elif check.status == "corrected":
            self.corrected += 1
        else:
            self.rejected += 1
        return check

    @property
    def total(self) -> int:
        return self.verified + self.corrected + self.rejected

    def as_dict(self) -> dict[str, int]:
        return {"verified": self.verified, "corrected": self.corrected, "rejected": self.rejected}


def _cap(text: str, cap: int = TEXT_CAP) -> str:
    if len(text) <= cap:
        return text
    return text[: cap - len(_TRUNCATION_MARK)] + _TRUNCATION_MARK


def _text(lines: Sequence[str], start: int, end: int) -> str:
    """Text of 1-based lines start..end (clamped to the file), capped. Joins lazily so a huge
    cited range does not build a huge string."""
    n = len(lines)
    start, end = max(1, start), min(end, n)
    if start > end:
        return ""
    out: list[str] = []
    size = 0
    for i in range(start - 1, end):
        out.append(lines[i])
        size += len(lines[i]) + 1
        if size > TEXT_CAP:
            break
    return _cap("\n".join(out))


# ------------------------------------------------------------------------------ checking


def verify_lines(
    lines: Sequence[str],
    path: str,
    start: int,
    end: int,
    quote: str | None,
    *,
    window: int = WINDOW,
    require_quote: bool = True,
    max_span: int | None = 200,
) -> EvidenceCheck:
    """Check a citation of ``path:start-end`` against the file's ``lines`` (all of them, line 1
    first). The pure core of :func:`check`, usable directly when the caller already holds the
    lines (e.g. ``rlm ask`` over stdin or a decompressed file).

    Rules:
    - ``start`` beyond the end of the file → rejected.
    - With a quote (non-empty after whitespace normalisation):
      * found inside start..end (end within the file) → verified, the cited range kept; but if
        the cited range is wider than ``max_span`` lines, it is narrowed to where the quote is
        (status corrected) so the evidence text shows the quoted lines;
      * else found within ``window`` lines around the range → corrected, the range replaced by
        the occurrence nearest to the cited range (then the shortest, then the earliest);
        this also rescues an ``end`` past the end of the file;
      * else → rejected ("quote not found at or near path:a-b"; the reason says where else in
        the file it occurs, if anywhere, but that occurrence is not accepted).
    - Without a quote: rejected ("no quote to check") when ``require_quote``; otherwise verified
      if the whole range exists, rejected if ``end`` is beyond the end of the file.
    """
    n = len(lines)
    cited = format_evidence_path(path, start, end)
    if start < 1 or end < start:
        return EvidenceCheck("rejected", path, start, end, "", f"invalid line range {cited}")
    if start > n:
        return EvidenceCheck(
            "rejected", path, start, end, "",
            f"line range {cited} does not exist: the file has {n} line{'s' if n != 1 else ''}",
        )
    beyond = end > n
    q = normalize_ws(quote or "")

    if not q:
        if require_quote:
            return EvidenceCheck("rejected", path, start, end, _text(lines, start, end),
                                 "no quote to check")
        if beyond:
            return EvidenceCheck(
                "rejected", path, start, end, "",
                f"line range {cited} does not exist: the file has {n} lines",
            )
        return EvidenceCheck("verified", path, start, end, _text(lines, start, end), "")

    # 1. inside the cited range
    if not beyond:
        spans = find_quote_spans(lines[start - 1 : end], start, q)
        if spans:
            if max_span is not None and end - start + 1 > max_span:
                a, b = min(spans, key=lambda s: (s[1] - s[0], s[0]))
                return EvidenceCheck(
                    "corrected", path, a, b, _text(lines, a, b),
                    f"cited range {cited} is {end - start + 1} lines wide; narrowed to the quote",
                )
            return EvidenceCheck("verified", path, start, end, _text(lines, start, end), "")

    return _near(lines, path, start, end, q, window, beyond) or _not_there(lines, path, start,
                                                                          end, q, beyond)


def _near(lines: Sequence[str], path: str, start: int, end: int, q: str, window: int,
          beyond: bool) -> EvidenceCheck | None:
    """The quote within ``window`` lines of the cited range: corrected to the nearest
    occurrence (then the shortest, then the earliest); None when it is not there."""
    n = len(lines)
    lo = max(1, start - max(window, 0))
    hi = min(n, end + max(window, 0))
    spans = find_quote_spans(lines[lo - 1 : hi], lo, q)
    if not spans:
        return None

    def distance(span: tuple[int, int]) -> int:
        a, b = span
        if b < start:
            return start - b
        if a > end:
            return a - end
        return 0  # overlaps the cited range (crosses its boundary)

    a, b = min(spans, key=lambda s: (distance(s), s[1] - s[0], s[0]))
    why = "cited range extends past the end of the file; " if beyond else ""
    cited = format_evidence_path(path, start, end)
    return EvidenceCheck("corrected", path, a, b, _text(lines, a, b),
                         f"{why}quote found at {format_evidence_path(path, a, b)}, not at {cited}")


def _not_there(lines: Sequence[str], path: str, start: int, end: int, q: str,
               beyond: bool) -> EvidenceCheck:
    n = len(lines)
    reason = f"quote not found at or near {format_evidence_path(path, start, end)}"
    if beyond:
        reason += f" (the file has {n} lines)"
    # Diagnostic only (never accepted): where else the quote occurs, for files of sane size.
    elsewhere = find_quote(lines, 1, q) if n <= _ELSEWHERE_MAX_LINES else None
    if elsewhere is not None:
        reason += f"; it occurs at {format_evidence_path(path, *elsewhere)}, too far from the citation"
    return EvidenceCheck("rejected", path, start, end, _text(lines, start, end), reason)


def check(
    root: Path,
    evidence_path: str,
    quote: str | None,
    window: int = WINDOW,
    line_reader: Callable[[Path], Sequence[str]] | None = None,
    *,
    require_quote: bool = True,
    max_span: int | None = 200,
) -> EvidenceCheck:
    """Check one citation ``evidence_path`` (e.g. ``"pkg/mod.py:12-20"``, relative to ``root``)
    and its ``quote`` against the file itself. Never raises for bad evidence: every problem
    (unparseable path, path outside the root, missing or unreadable file, range not in the
    file, quote not there) comes back as a "rejected" EvidenceCheck with its reason.

    ``line_reader(resolved_path) -> lines`` replaces the default reader (:func:`read_lines`:
    UTF-8 with replacement, ``.gz`` decompressed, cached on path/mtime/size). For a single-file
    corpus pass ``root=file.parent`` and cite the file's name. See :func:`verify_lines` for the
    rules and for ``window``, ``require_quote`` and ``max_span``.
    """
    try:
        path, start, end = parse_evidence_path(evidence_path)
    except ValueError as e:
        return EvidenceCheck("rejected", str(evidence_path), 0, 0, "", str(e))
    try:
        resolved = safe_resolve(Path(root), path)
    except EvidenceError as e:
        return EvidenceCheck("rejected", path, start, end, "", str(e))
    reader = line_reader or read_lines
    try:
        lines = reader(resolved)
    except (OSError, EOFError, ValueError) as e:  # permissions, broken .gz, ...
        detail = getattr(e, "strerror", None) or str(e) or type(e).__name__
        return EvidenceCheck("rejected", path, start, end, "", f"{path}: cannot be read ({detail})")
    return verify_lines(lines, path, start, end, quote, window=window,
                        require_quote=require_quote, max_span=max_span)
