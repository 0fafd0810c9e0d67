"""Measure before reading: bytes, lines, files, kind and at most 50 sample lines.

The probe never decodes the whole corpus into memory; it counts newlines in C (bytes.count
over mmap) and looks at a handful of evenly spaced sample lines.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rlm.corpus.line_offsets import Builder
from rlm.corpus.logformat import LogFormat, detect
from rlm.corpus.beneath import open_file
from rlm.corpus.source import TextSource
from rlm.engine.interrupt import checkpoint

MAX_SAMPLES = 50
BINARY_SNIFF = 8192
HEAD_BYTES = 1 << 16  # contiguous head lines for record regularity (multi-line records)
HEAD_LINES = 200

_CODE_EXT = {
    ".py", ".js", ".ts", ".tsx", ".jsx", ".go", ".rs", ".java", ".c", ".h", ".cpp", ".hpp",
    ".cs", ".rb", ".php", ".kt", ".swift", ".scala", ".sh", ".sql", ".lua", ".m", ".r",
}


@dataclass
class Probe:
    path: str
    bytes: int
    lines: int
    files: int = 1
    kind: str = "text"  # log | transcript | table | prose | code | text | binary | empty | folder
    samples: list[str] = field(default_factory=list)  # at most 50 evenly spaced lines
    head: list[str] = field(default_factory=list)  # up to 200 contiguous first lines
    log_format: LogFormat | None = None  # why the text is (not) a log
    longest_line: int = 0
    invalid_utf8: bool = False
    trailing_newline: bool = True
    notes: list[str] = field(default_factory=list)

    def as_corpus(self) -> dict:
        return {"path": self.path, "bytes": self.bytes, "lines": self.lines,
                "files": self.files, "kind": self.kind}


def looks_binary(head: bytes) -> bool:
    """One binary test for every command (rlm.corpus.binary)."""
    from rlm.corpus.binary import is_binary

    return is_binary(head)


def classify(samples: list[str], path: str, head: list[str] | None = None) -> str:
    """Kind from the extension (code) or from record regularity (log, transcript, table),
    else prose or text by words per line."""
    return classify_format(samples, path, head)[0]


def classify_format(samples: list[str], path: str,
                    head: list[str] | None = None) -> tuple[str, LogFormat | None]:
    lower = path.lower()
    for ext in _CODE_EXT:
        if lower.endswith(ext):
            return "code", None
    nonblank = [s for s in samples if s.strip()]
    if not nonblank:
        return "text", None
    fmt = detect(list(head or []) + nonblank)
    if fmt.kind in ("log", "transcript", "table"):
        return fmt.kind, fmt
    words = sum(len(s.split()) for s in nonblank) / len(nonblank)
    return ("prose" if words >= 6 else "text"), fmt


def probe_source(src: TextSource) -> Probe:
    data = src.data
    size = src.size
    if size == 0:
        return Probe(path=src.display, bytes=0, lines=0, kind="empty")
    head = bytes(data[:BINARY_SNIFF])
    if looks_binary(head):
        return Probe(path=src.display, bytes=size, lines=0, kind="binary")
    index = Builder(size) if src.needs_offsets else None
    newlines, longest, valid = _scan(src.path, size, index)
    if index is not None:  # the line index from the same reads: the file is read once
        src.set_offsets(index.finish(lambda: src.data))
    trailing = data[size - 1 : size] == b"\n"
    lines = newlines + (0 if trailing else 1)
    pr = Probe(path=src.display, bytes=size, lines=lines, trailing_newline=trailing)
    # Evenly spaced samples by byte offset: no need to index every line for the probe.
    step = max(1, size // MAX_SAMPLES)
    seen: set[int] = set()
    for i in range(MAX_SAMPLES):
        off = min(size - 1, i * step)
        start = data.rfind(b"\n", 0, off) + 1 if off else 0
        if start in seen:
            continue
        seen.add(start)
        end = data.find(b"\n", start)
        end = size if end == -1 else end
        raw = bytes(data[start : min(end, start + 400)])
        pr.samples.append(raw.decode("utf-8", errors="replace"))
        if len(pr.samples) >= MAX_SAMPLES:
            break
    pr.longest_line = longest
    pr.invalid_utf8 = not valid
    pr.head = _head_lines(data, size)
    pr.kind, pr.log_format = classify_format(pr.samples, src.display, pr.head)
    if pr.invalid_utf8:
        pr.notes.append("invalid UTF-8: decoded with replacement characters (U+FFFD)")
    if not trailing:
        pr.notes.append("the last line has no trailing newline")
    return pr


def _head_lines(data, size: int) -> list[str]:
    raw = bytes(data[: min(size, HEAD_BYTES)])
    if size > HEAD_BYTES and b"\n" in raw:
        raw = raw[: raw.rfind(b"\n")]  # drop the cut line
    return [s[:400] for s in raw.decode("utf-8", "replace").split("\n")[:HEAD_LINES]]


def _scan(path, size: int, index: Builder | None = None) -> tuple[int, int, bool]:
    """One pass of plain reads (not the mmap: touching every page would make the whole file
    resident): newlines, the longest line in bytes, and whether the text is valid UTF-8; with
    `index`, the line index is built from the same reads."""
    newlines = longest = run = 0
    carry = b""
    valid = True
    block = 1 << 22
    with open_file(path) as fh:
        off = 0
        while data := fh.read(block):
            checkpoint(off, size)  # Ctrl-C stops the probe of a huge file here
            off += len(data)
            nl = np.flatnonzero(np.frombuffer(data, np.uint8) == 10)
            if index is not None:
                index.feed(data, nl)
            newlines += len(nl)
            if len(nl):
                longest = max(longest, run + int(nl[0]))
                if len(nl) > 1:
                    longest = max(longest, int(np.diff(nl).max()) - 1)
                run = len(data) - int(nl[-1]) - 1
            else:
                run += len(data)
            if valid and not (not carry and data.isascii()):
                chunk = carry + data
                try:
                    chunk.decode("utf-8")
                    carry = b""
                except UnicodeDecodeError as e:
                    # a multi-byte character may straddle the block edge: carry the tail over
                    if e.start >= len(chunk) - 3 and off < size:
                        carry = chunk[e.start:]
                    else:
                        valid = False
    return newlines, max(longest, run), valid and not carry
