"""Opening what `rlm ask` reads: one file (or stdin, spooled) or the text files of a folder,
probed, with what was skipped and why. Nothing is read whole: sources are mmapped."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rlm.engine import interrupt as scanctl
from rlm.corpus.lines import MAX_LINE_CHARS
from rlm.corpus.logset import open_gz, time_order
from rlm.corpus.probe import Probe, probe_source
from rlm.corpus.source import TextSource
from rlm.errors import UsageError


@dataclass
class Corpus:
    """One file or the readable text files of a folder, with what was skipped and why."""

    path: str
    sources: list[TextSource]
    probe: Probe
    skipped: list[dict] = field(default_factory=list)
    kinds: dict[str, str] = field(default_factory=dict)  # a folder's files: path -> probe kind

    def close(self) -> None:
        for s in self.sources:
            s.close()

    # -- as the lines of a chunk over several of its files (rlm.corpus.chunk.Lines) ----------
    headed = False

    def source(self, path: str) -> TextSource:
        by = self.__dict__.get("_by_display")
        if by is None or len(by) != len(self.sources):  # a grep unit may span 1,000s of parts
            by = self.__dict__["_by_display"] = {s.display: s for s in self.sources}
        return by[path]

    def part_lines(self, p) -> list[str]:
        return self.source(p.path).part_lines(p)

    def part_bytes(self, p) -> tuple[int, int]:
        return self.source(p.path).part_bytes(p)

    def total_lines(self, path: str) -> int:
        return self.source(path).line_count


def open_corpus(path_arg: str) -> Corpus:
    p = Path(path_arg)
    if path_arg != "-" and p.is_dir():
        return _open_folder(p, path_arg)
    src = TextSource.open(path_arg)
    src.single_file = True
    pr = probe_source(src)
    if pr.kind == "empty":
        src.close()
        raise UsageError(f"{path_arg} is empty: nothing to ask about")
    if pr.kind == "binary":
        src.close()
        raise UsageError(f"{path_arg} looks like a binary file (NUL bytes); rlm reads text")
    return Corpus(path_arg, [src], pr)


def _open_folder(root: Path, display: str) -> Corpus:
    from rlm.corpus.walk import walk

    res = walk(root)
    gz, res.skipped = open_gz(root, res.skipped)  # rotated app.log.2.gz: read decompressed
    sources: list[TextSource] = []
    skipped: list[dict] = []
    kinds: set[str] = set()
    kind_of: dict[str, str] = {}
    for s in res.skipped:
        skipped.append({"path": s.path, "reason": s.reason, "incomplete": s.incomplete})
    total_b = total_l = 0
    samples: list[str] = []
    notes: list[str] = []
    entries = [(fe.path, None) for fe in res.files] + gz
    for rel, opened in entries:
        scanctl.checkpoint()
        fp = root / rel
        try:
            src = opened or TextSource(fp, display=rel)
            pr = probe_source(src)
        except (OSError, UsageError) as e:
            skipped.append({"path": rel, "reason": f"unreadable: {e}", "incomplete": True})
            continue
        if pr.kind == "empty":
            skipped.append({"path": rel, "reason": "empty", "incomplete": False})
            src.close()
            continue
        if pr.kind == "binary":
            skipped.append({"path": rel, "reason": "binary", "incomplete": False})
            src.close()
            continue
        sources.append(src)
        kinds.add(pr.kind)
        kind_of[src.display] = pr.kind
        total_b += pr.bytes
        total_l += pr.lines
        samples.extend(pr.samples[:3])
        notes.extend(f"{rel}: {n}" for n in pr.notes if "trailing newline" not in n)
        if pr.longest_line > MAX_LINE_CHARS * 4:
            notes.append(f"{rel}: a line of {pr.longest_line:,} bytes is cut by bytes into chunks")
    if not sources:
        raise UsageError(f"{display}: no readable text files (skipped {len(skipped)})")
    probe = Probe(path=display, bytes=total_b, lines=total_l, files=len(sources),
                  kind="folder", samples=samples[:50], notes=notes)
    if kinds == {"log"}:  # a folder of logs is one log corpus, its files in time order
        probe.kind = "log"
        sources = time_order(sources)
    return Corpus(display, sources, probe, skipped, kind_of)


def focus_logs(corpus: Corpus, question: str) -> Corpus:
    """A folder of logs and other files (README, CSV, JSON): a question about the logs is
    answered from the log files only; the others are listed in the coverage statement as not
    logs, never answered from. A question that names one of them (`README`, `hosts.csv`)
    keeps the whole folder."""
    logs = [s for s in corpus.sources if corpus.kinds.get(s.display) == "log"]
    others = [s for s in corpus.sources if corpus.kinds.get(s.display) != "log"]
    if not logs or not others:
        return corpus
    q = question.lower()
    for s in others:
        name = s.display.lower().rsplit("/", 1)[-1]
        if name in q or name.rsplit(".", 1)[0] in q.split() or name.rsplit(".", 1)[-1] in q.split():
            return corpus  # the question is about one of the other files
    old = corpus.probe
    probe = Probe(path=old.path, bytes=sum(s.size for s in logs),
                  lines=sum(s.line_count for s in logs), files=len(logs), kind="log",
                  samples=old.samples, notes=[n for n in old.notes
                                              if n.split(":", 1)[0] in {s.display for s in logs}])
    skipped = corpus.skipped + [
        {"path": s.display, "reason": f"not a log ({corpus.kinds.get(s.display)}): listed, not "
                                      "answered from (the question is about the logs)",
         "incomplete": False} for s in others]
    for s in others:
        s.close()
    return Corpus(corpus.path, time_order(logs), probe, skipped, corpus.kinds)


def unread_corpus(path: str) -> Corpus:
    """What is known of a corpus whose probe Ctrl-C stopped: its name and size on disk."""
    try:
        size = 0 if path == "-" else Path(path).stat().st_size
    except OSError:
        size = 0
    return Corpus(path, [], Probe(path=path, bytes=size, lines=0, files=0, kind="unknown"))
