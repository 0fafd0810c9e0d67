"""The one chunk type (rlm.corpus.chunk): ask's file chunks, repository chunks over several
files, pieces of over-long lines and the grep unit are the same type, hold no text, and render
through the one numbered-line renderer; evidence is only found in what a chunk showed."""

from __future__ import annotations

from rlm.verify import evidence
from rlm.corpus.chunk import Chunk, Part, ShownLines
from rlm.corpus.index import chunk_source
from rlm.corpus.lines import CUT_MARK, number_pairs
from rlm.corpus.open import open_corpus
from rlm.corpus.source import TextSource
from rlm.repo.chunks import chunk_files
from rlm.engine import fit


def _log(tmp_path, n=40):
    p = tmp_path / "app.log"
    p.write_text("".join(f"line {i} event=e{i}\n" for i in range(1, n + 1)))
    return TextSource(p, display="app.log")


def test_file_chunks_hold_no_text_and_render_file_line_numbers(tmp_path):
    src = _log(tmp_path)
    chunks = chunk_source(src, 100)
    assert len(chunks) > 3 and all(isinstance(c, Chunk) for c in chunks)
    assert not hasattr(chunks[0], "__dict__")  # slots: 20,000 of them stay small
    c = chunks[1]
    assert [p.path for p in c.parts] == ["app.log"] and c.line_start > 1
    first = c.numbered_text().split("\n")[0]
    assert first == f"{c.line_start}| line {c.line_start} event=e{c.line_start}"
    # the chunks cover the file exactly, in order, bytes and lines
    assert sum(x.nbytes for x in chunks) == src.size
    assert [x.line_start for x in chunks[1:]] == [x.line_end + 1 for x in chunks[:-1]]
    assert c.sha() == chunk_source(src, 100)[1].sha() != chunks[2].sha()


def test_evidence_is_only_found_in_what_the_chunk_showed(tmp_path):
    src = _log(tmp_path)
    c = chunk_source(src, 100)[1]
    shown = ShownLines(c)
    assert len(shown) == src.line_count
    inside, outside = c.line_start, c.line_end + 3
    assert shown[inside - 1] == f"line {inside} event=e{inside}" and shown[outside - 1] == ""
    ok = evidence.verify_lines(shown, "app.log", inside, inside, f"event=e{inside}")
    assert ok.ok
    bad = evidence.verify_lines(shown, "app.log", outside, outside, f"event=e{outside}")
    assert not bad.ok  # the line is in the file, but this call was not shown it


def test_over_long_line_pieces_and_fit_split(tmp_path):
    p = tmp_path / "one.log"
    p.write_text("short\n" + "é" * 500 + "\nend\n", encoding="utf-8")
    src = TextSource(p, display="one.log")
    pieces = [c for c in chunk_source(src, 200) if c.cut]
    assert len(pieces) >= 5 and all(c.line_start == c.line_end == 2 for c in pieces)
    assert "".join(ShownLines(c)[1] for c in pieces).rstrip("\n") == "é" * 500
    text = pieces[0].numbered_text(10)  # a piece is shown whole: it was cut to fit already
    assert text.startswith("2| é") and CUT_MARK not in text
    assert "piece of an over-long line" in pieces[0].describe()
    whole = Chunk("c1", (Part("one.log", 1, 3),), src)
    halves = fit.split(whole)
    assert [(h.line_start, h.line_end) for h in halves] == [(1, 2), (3, 3)]
    assert sum(h.nbytes for h in halves) == whole.nbytes == src.size
    bytes_halves = fit.split(halves[0])
    assert [h.id for h in bytes_halves] == ["c1", "c1"]


def test_repository_chunk_over_several_files_is_the_same_type(tmp_path):
    (tmp_path / "a.py").write_text("def f():\n    return 1\n")
    (tmp_path / "b.py").write_text("B = 2\n")
    [ch] = chunk_files(tmp_path, "(root)", ["a.py", "b.py"], 5000)
    assert isinstance(ch, Chunk) and ch.module == "(root)" and ch.describe() == \
        "module (root): 2 files"
    assert ShownLines(ch, "b.py")[0] == "B = 2" and ShownLines(ch, "a.py")[1] == "    return 1"
    assert ch.numbered_text().startswith("### a.py (lines 1-2 of 2)\n  1| def f():")


def test_grep_unit_over_several_files_names_each_file(tmp_path):
    (tmp_path / "x.log").write_text("a\nTXN-1 failed\nb\n")
    (tmp_path / "y.log").write_text("c\nd\nTXN-1 retried\n")
    corpus = open_corpus(str(tmp_path))
    try:
        unit = Chunk("g0001", (Part("x.log", 2, 2), Part("y.log", 3, 3)), corpus)
        assert unit.numbered_text() == "--- x.log ---\n2| TXN-1 failed\n--- y.log ---\n3| TXN-1 retried"
        assert unit.lines == 2 and unit.paths == ["x.log", "y.log"]
    finally:
        corpus.close()


def test_the_one_renderer_marks_cuts_and_aligns_numbers():
    text, cuts = number_pairs([(7, "a\tb"), (120, "x" * 30)], width=3, max_chars=10)
    assert text == "  7| a    b\n120| " + "x" * 10 + CUT_MARK and cuts == 1
    assert number_pairs([(1, "y" * 30)], max_chars=None) == ("1| " + "y" * 30, 0)
