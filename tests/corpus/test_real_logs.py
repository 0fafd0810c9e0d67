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


BGL = head_path("BGL").with_name("BGL_2k.log")


def test_bgl_2k_is_the_whole_labelled_file():
    """The copy is whole: 2,000 lines, the LogHub label counts, every line self-consistent
    (the epoch field and the local timestamp agree; both location fields agree)."""
    import datetime
    import re

    lines = BGL.read_text(encoding="utf-8").split("\n")
    assert len(lines) == 2000
    labels = [s.split(" ", 1)[0] for s in lines]
    assert labels.count("-") == 1857 and len(set(labels) - {"-"}) == 12
    rx = re.compile(r"^\S+ (\d{10}) (\S+) (\S+) (\d{4})-(\d\d)-(\d\d)-(\d\d)\.(\d\d)\.(\d\d)\.\d{6} (\S+) ")
    for s in lines:
        m = rx.match(s)
        assert m and m.group(3) == m.group(10), s
        y, mo, d, h, mi, sec = (int(g) for g in m.group(4, 5, 6, 7, 8, 9))
        local = datetime.datetime(y, mo, d, h, mi, sec, tzinfo=datetime.timezone.utc).timestamp()
        assert int(m.group(1)) - local in (7 * 3600, 8 * 3600), s  # PDT / PST
        assert m.group(2) == f"{y:04d}.{mo:02d}.{d:02d}", s


def test_candidates_reach_every_bgl_alert_category(tmp_path):
    """On the real BGL_2k with its labels stripped, the lines rlm's profile hands on reach
    all 12 alert categories (the labels stay with the test, not in the log)."""
    from evals.real_candidates import strip_labels
    from rlm.corpus.profile import profile_log
    from rlm.corpus.source import TextSource

    stripped = tmp_path / "bgl.log"
    alerts = strip_labels(BGL, stripped)
    assert len(alerts) == 143
    assert not any(s.split(" ", 1)[0] in set(alerts.values())
                   for s in stripped.read_text().splitlines())
    with TextSource(stripped) as src:
        prof = profile_log(src)
    reached = {alerts[ln] for ln in prof.candidates if ln in alerts}
    assert reached == set(alerts.values())


TBIRD = head_path("Thunderbird").with_name("Thunderbird_2k.log")


def test_thunderbird_2k_is_the_whole_labelled_file():
    """The copy is whole: 2,000 lines, 325,192 characters as the repository counts them (one
    more per line end but the last), every label `-`, every line self-consistent (the epoch
    field against the local time in PST, the date field against the syslog date, the node
    against the tag after the time)."""
    import datetime
    import re

    text = TBIRD.read_text(encoding="utf-8")
    lines = text.split("\n")
    assert len(lines) == 2000 and len(text) + len(lines) - 1 == 325_192
    assert {s.split(" ", 1)[0] for s in lines} == {"-"}
    months = {m: i for i, m in enumerate("Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split(), 1)}
    rx = re.compile(r"^- (\d{10}) (\d{4})\.(\d\d)\.(\d\d) (\S+) (\w{3}) +(\d{1,2}) "
                    r"(\d\d):(\d\d):(\d\d) (\S+) ")
    for s in lines:
        m = rx.match(s)
        assert m, s
        node, tag = m.group(5), m.group(11)
        assert node in tag, s
        y, mo, d = int(m.group(2)), months[m.group(6)], int(m.group(7))
        assert (int(m.group(3)), int(m.group(4))) == (mo, d), s
        local = datetime.datetime(y, mo, d, *(int(g) for g in m.group(8, 9, 10)),
                                  tzinfo=datetime.timezone.utc).timestamp()
        assert int(m.group(1)) - local == 8 * 3600, s  # PST


def test_the_noun_interrupt_is_not_a_failure_word():
    """Real kernel lines name interrupts routinely (Thunderbird's boot, BGL's INFO lines, both
    labelled normal); an operation that was interrupted is still a failure."""
    from rlm.corpus.severity import lexicon_words

    lines = TBIRD.read_text(encoding="utf-8").split("\n")
    acpi = [s for s in lines if "ACPI: PCI Interrupt Link" in s]
    assert len(acpi) == 8 and all(lexicon_words(s.partition(" ")[2]) == [] for s in acpi)
    assert lexicon_words("RAS KERNEL INFO critical input interrupt (unit=0x0b bit=0x0e)") == []
    assert lexicon_words("transfer interrupted by peer") == ["interrupted"]
    assert lexicon_words("sshd[1761]: error: Bind to port 22 on 0.0.0.0 failed") == [
        "error", "failed"]
