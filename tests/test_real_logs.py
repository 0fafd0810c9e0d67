"""Real logs from the public LogHub collection (evals/data/loghub/, copied with its licence):
every one of the 16 families' head samples is detected as a log by the probe that `rlm ask`
runs. The synthetic families in tests/test_logformat.py are written by us; these are not."""

from __future__ import annotations

import pytest

from evals.real_logs import FAMILIES, detect_family, head_path


@pytest.mark.parametrize("family", FAMILIES)
def test_real_head_is_detected_as_a_log(family):
    path = head_path(family)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert 50 <= len(lines) <= 100  # a head sample, whole lines
    kind, is_log, why = detect_family(family)
    assert is_log, f"{family}: kind {kind!r} ({why})"


def test_a_head_cut_to_prose_is_not_a_log(tmp_path):
    """The check above can fail: the same probe calls running text prose."""
    from rlm.corpus.probe import probe_source
    from rlm.corpus.source import TextSource

    p = tmp_path / "notes.txt"
    p.write_text("The cluster was quiet for most of the night, and the operators went home.\n"
                 "In the morning a few nodes reported parity errors, which were corrected.\n"
                 "Nobody could say why the job scheduler had stopped accepting new work.\n" * 20)
    with TextSource(p) as src:
        assert probe_source(src).kind != "log"
