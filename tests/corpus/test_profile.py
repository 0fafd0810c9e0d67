"""The log profiler: rare shapes and error levels are the candidates, found by code alone."""

import pytest

from rlm.corpus.profile import profile_log
from rlm.corpus.source import TextSource
from rlm.fixtures.log import write_log


@pytest.mark.parametrize("lines", [2_000, 20_000, 150_000])
def test_candidates_are_exactly_the_needles(tmp_path, lines):
    p = tmp_path / "app.log"
    key = write_log(p, lines=lines)
    with TextSource(p) as src:
        prof = profile_log(src)
    assert prof.lines == lines
    assert prof.candidates == [n["line"] for n in key["needles"]]
    assert prof.templates_total <= 40  # the noise collapses to a few shapes


def test_rare_threshold_is_relative_to_size(tmp_path):
    p = tmp_path / "tiny.log"
    write_log(p, lines=180)
    with TextSource(p) as src:
        assert profile_log(src).rare_max == 1
    p = tmp_path / "big.log"
    write_log(p, lines=150_000)
    with TextSource(p) as src:
        assert profile_log(src).rare_max == 5


def test_last_line_without_newline_is_profiled(tmp_path):
    p = tmp_path / "x.log"
    p.write_text("INFO a=1\nINFO a=2\nINFO a=3\nERROR disk full")
    with TextSource(p) as src:
        prof = profile_log(src)
    assert prof.lines == 4 and prof.candidates == [4]
