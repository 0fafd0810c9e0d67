"""The probe builds the line index from its own reads (one pass over the file instead of two):
the index it leaves is the one a fresh scan builds, line for line, whatever the file's end."""

from __future__ import annotations

import pytest

from rlm.corpus import line_offsets
from rlm.corpus.probe import probe_source
from rlm.corpus.source import TextSource


@pytest.mark.parametrize("text", [
    "".join(f"line {i} {'x' * (i % 97)}\n" for i in range(5000)),  # trailing newline
    "".join(f"line {i}\n" for i in range(300)) + "last line without newline",
    "one line only",
    "\n\n\n",
])
def test_the_probes_index_is_the_scans_index(tmp_path, monkeypatch, text):
    monkeypatch.setattr(line_offsets, "STEP", 7)  # many samples, blocks split across them
    p = tmp_path / "x.log"
    p.write_text(text)
    with TextSource.open(str(p)) as fresh:
        want = [fresh.offsets[i] for i in range(len(fresh.offsets))]
        lines = fresh.lines(1, len(fresh.offsets))
    with TextSource.open(str(p)) as src:
        pr = probe_source(src)
        assert not src.needs_offsets  # the probe left its index
        got = [src.offsets[i] for i in range(len(src.offsets))]
        assert got == want and len(got) == pr.lines
        assert src.lines(1, len(got)) == lines
