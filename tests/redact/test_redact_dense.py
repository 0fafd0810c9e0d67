"""The fast detectors (rlm.redact.dense: RE2 over bytes, the byte before a value consumed and
the byte after checked in Python) find exactly what the Python patterns of rlm.redact.detect
find, on real logs; and an IPv4-shaped version stays (issue 21, items 4 and 5)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlm.redact import dense, ipv4
from rlm.redact import detect as D

LOGS = sorted((Path(__file__).resolve().parents[2] / "evals" / "data" / "loghub").glob("*.log"))
TRICKY = "\n".join([  # boundaries each pattern's look-arounds decide
    "from 10.0.0.1, 10.0.0.2;10.0.0.3 x10.0.0.4 10.0.0.5x 1.2.3.4.5 .10.0.0.6 10.0.0.7.",
    "256.1.1.1 1.2.3.255 0.0.0.0 127.0.0.1 host-10.1.2.3 [10.9.8.7]:80 ip=192.168.1.20",
    "jane.doe@acme-corp.com x-a@b.io a@b.example.com1 _q@r.org ok@ok.org- mail:me@x.de",
    "card 4111 1111 1111 1111 and 4111-1111-1111-1111x and 1 4111 1111 1111 1111 end",
    "fe80::1ff:fe23:4567:890a Foo::bar ::1 2001:db8:85a3:0:0:8a2e:370:7334 a::b::c",
])


def _python(text: str) -> set[tuple[int, int, str]]:
    """What the Python patterns find, checks applied as rlm.redact.detect applies them."""
    out = {(m.start(), m.end(), "IP") for m in D._IPV4.finditer(text)
           if not m.group().startswith("127.") and m.group() != "0.0.0.0"
           and not ipv4.VERSION_BEFORE.search(text[max(0, m.start() - 24):m.start()]
                                                .encode())}
    out |= {(m.start(), m.end(), "IP6") for m in D._IPV6.finditer(text) if D._ipv6_ok(m.group())}
    out |= {(m.start(), m.end(), "EMAIL") for m in D._EMAIL.finditer(text)}
    out |= {(m.start(), m.end(), "CARD") for m in D._CARD.finditer(text) if D.is_card(m.group())}
    return out


def _fast(text: str) -> set[tuple[int, int, str]]:
    data = text.encode()
    assert len(data) == len(text)  # ASCII: byte and character offsets agree
    nl = b"\n" + data
    found: list = []
    dense.ipv4(nl, found)
    out = set(found)
    out |= {(s, e, "IP6") for s, e in dense.ipv6(data, D._ipv6_ok)}
    out |= {(s - 1, e - 1, "EMAIL") for s, e in dense.with_fallback("email", nl, D._EMAIL, True)}
    out |= {(s - 1, e - 1, "CARD") for s, e in dense.with_fallback("card", nl, D._CARD, True)
            if D._card_ok(nl[s:e])}
    return out


def test_the_tricky_boundaries_agree():
    py, fast = _python(TRICKY), _fast(TRICKY)
    assert fast == py, (sorted(py - fast), sorted(fast - py))
    found = {TRICKY[a:b] for a, b, _ in fast}
    assert {"10.0.0.1", "10.0.0.2", "10.0.0.3", "10.9.8.7", "192.168.1.20", "10.1.2.3",
            "jane.doe@acme-corp.com", "4111 1111 1111 1111", "fe80::1ff:fe23:4567:890a",
            "2001:db8:85a3:0:0:8a2e:370:7334"} <= found
    assert not {"10.0.0.4", "10.0.0.5", "127.0.0.1", "0.0.0.0", "256.1.1.1", "::1"} & found


@pytest.mark.parametrize("path", LOGS, ids=[p.name for p in LOGS])
def test_the_fast_detectors_find_what_the_python_patterns_find(path):
    text = path.read_text("ascii", "replace")
    assert _fast(text) == _python(text)


@pytest.mark.parametrize("line,kept", [
    ("cpInitialize (wcp.dll version 0.0.0.6) called", "0.0.0.6"),
    ("Package_for_KB3121255~31bf3856ad364e35~amd64~~6.1.1.0, ApplicableState: 1", "6.1.1.0"),
    ("productID=com.google.Keystone version=1.2.8.57 xc=<KSPathExistenceChecker", "1.2.8.57"),
    ("agent v 2.4.0.1 started; build: 10.0.19041.1", "2.4.0.1"),
])
def test_a_version_is_not_an_address(line, kept):
    assert all(h.value != kept for h in D.detect(line)), D.detect(line)


@pytest.mark.parametrize("line,ip", [
    ("Server: 10.251.90.64 responded", "10.251.90.64"),  # 'ver' inside a word is no version
    ("Invalid user webmaster from 173.234.31.186", "173.234.31.186"),
    ("DHCP release 10.100.4.251 from eth1", "10.100.4.251"),
    ("network changed: v4(en0:10.105.163.202)", "10.105.163.202"),
])
def test_an_address_after_other_words_is_still_redacted(line, ip):
    assert [h.value for h in D.detect(line) if h.kind == "IP"] == [ip]


def test_offsets_hold_next_to_non_ascii_text():
    """The byte before a value may be the last byte of a multi-byte character: the scan reads
    one byte at a time (Latin-1), so the value starts where it does, and maps back to its
    characters."""
    text = ("адрес:10.0.0.1 → jane.doe@acme-corp.com ñ 4111 1111 1111 1111 "
            "日本 fe80::1ff:fe23:4567:890a\n€192.168.7.7")
    hits = D.detect(text)
    assert all(text[h.start:h.end] == h.value for h in hits)
    assert {h.value for h in hits} >= {"10.0.0.1", "jane.doe@acme-corp.com",
                                       "4111 1111 1111 1111", "fe80::1ff:fe23:4567:890a",
                                       "192.168.7.7"}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_addresses_found_with_arrays_match_the_pattern_on_random_text(seed):
    """rlm.redact.ipv4 finds addresses with array operations: on text made only of what its
    boundaries are about (digits, dots, separators, version words, octets over 255, leading
    zeros, a fifth group) it finds exactly what the Python pattern finds."""
    import random

    rnd = random.Random(seed)
    octets = [0, 1, 9, 10, 25, 99, 100, 127, 199, 249, 255, 256, 300, 1000, "01", "00", "2555"]
    seps = [" ", "..", ".", "-", ":", "=", "a", "_", "/", " v ", " ver ", "~", "\n", ",", ".x",
            " version: ", " Build=", "rev ", " firmware:= ", "xv ", "\tV\t", " v=:", "~ "]
    chains = (".".join(str(rnd.choice(octets)) for _ in range(rnd.choice([3, 4, 4, 4, 5])))
              for _ in range(20_000))
    text = "".join(c + rnd.choice(seps) for c in chains)
    found = [(s, e) for s, e, _ in _fast_ipv4(text)]
    py = sorted((a, b) for a, b, k in _python(text) if k == "IP")
    assert sorted(found) == py and len(py) > 500, (len(found), len(py))


@pytest.mark.parametrize("pieces", [40, 400, 2000])
def test_the_arrays_few_candidate_path_matches_the_pattern(pieces):
    """Under 1,000 candidates the arrays read the octets with one regex call: on the same random
    text cut into pieces (40: ~500 candidates a piece; 400: ~50), the arrays find what RE2
    does."""
    import random

    from rlm.redact import ipv4

    rnd = random.Random(5)
    octets = [0, 1, 9, 10, 25, 99, 100, 127, 199, 249, 255, 256, 300, 1000, "01", "00", "2555"]
    seps = [" ", "..", ".", "-", ":", "=", "a", "_", "/", " v ", " ver ", "~", "\n", ",", ".x",
            " version: ", " Build=", "rev ", " firmware:= ", "xv ", "\tV\t", " v=:", "~ "]
    chains = [".".join(str(rnd.choice(octets)) for _ in range(rnd.choice([3, 4, 4, 4, 5])))
              for _ in range(20_000)]
    text = "".join(c + rnd.choice(seps) for c in chains)
    step = len(text) // pieces + 1
    assert ipv4.OCTETS_BY_ARRAYS > 20_000 // pieces * 4 // 5  # the regex path is the one read
    total = 0
    for i in range(0, len(text), step):
        nl = b"\n" + text[i:i + step].encode()
        starts, ends = ipv4.spans(nl)
        matched: list = []
        dense.ipv4_matches(nl, matched)
        assert list(zip(starts, ends)) == [(s + 1, e + 1) for s, e, _ in matched]
        if ipv4.scanned(nl) is not None:  # Hyperscan's reports, read one by one under 150
            assert list(zip(*ipv4.scanned(nl))) == list(zip(starts, ends))
        total += len(starts)
    assert total > 500


def _fast_ipv4(text: str) -> list:
    from rlm.redact import ipv4

    nl = b"\n" + text.encode()
    out: list = []
    dense.ipv4(nl, out)
    matched: list = []
    dense.ipv4_matches(nl, matched)
    assert out == matched  # the path taken (Hyperscan where installed) and RE2 agree
    shifted = [(s + 1, e + 1) for s, e, _ in matched]
    assert list(zip(*ipv4.spans(nl))) == shifted  # array operations
    if ipv4.scanned(nl) is not None:
        assert list(zip(*ipv4.scanned(nl))) == shifted  # one Hyperscan pass
    return out


def test_entropy_verdicts_are_remembered_for_short_candidates_only():
    """A log repeats its tokens, so verdicts are cached on the candidate's bytes; a base64 blob
    is one candidate of any length, so only candidates up to CACHED_MAX bytes are kept (the
    cache's memory stays bounded), and the blob is still found."""
    import random

    from rlm.redact import scan

    rnd = random.Random(3)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    key = "".join(rnd.choice(alphabet) for _ in range(40))
    blob = "".join(rnd.choice(alphabet) for _ in range(200_000))
    scan._token_verdict.cache_clear()
    found = [v for _, _, v in scan.entropy_hits(f"k {key} and {key}\nblob {blob}\n".encode())]
    assert found == [key, key, blob]
    info = scan._token_verdict.cache_info()
    assert (info.currsize, info.hits) == (1, 1)  # the key once, then remembered; not the blob


def test_without_hyperscan_addresses_are_found_the_same(monkeypatch):
    """Where the hyperscan wheel is missing, a prompt's addresses are found by arrays or RE2
    (by its dots), and agree with what the Hyperscan pass finds."""
    import random

    from rlm.redact import ipv4

    rnd = random.Random(9)
    lines = [f"from {rnd.randrange(1, 255)}.{rnd.randrange(256)}.{rnd.randrange(256)}."
             f"{rnd.randrange(256)} port {rnd.randrange(65536)} v 1.2.3.4 ~ 127.0.0.{i % 9}"
             for i in range(3_000)]
    texts = [b"\n" + "\n".join(lines[:n]).encode() for n in (3, 60, 3_000)]  # RE2, arrays
    with_hs = []
    for nl in texts:
        out: list = []
        dense.ipv4(nl, out)
        with_hs.append(out)
    monkeypatch.setattr(ipv4, "_database", lambda: None)
    for nl, expected in zip(texts, with_hs):
        assert ipv4.scanned(nl) is None
        out = []
        dense.ipv4(nl, out)
        assert out == expected and len(out) >= len(nl) // 60


def test_a_large_text_finds_the_same_addresses_by_either_path(monkeypatch):
    """From 1 MB a text goes through Hyperscan or the arrays by the addresses in its first
    64 KB (rlm.redact.ipv4.large); both find what RE2 does, also for an address that ends or
    starts right at the probe's cut, and a sparse text never pays for the arrays."""
    from rlm.redact import ipv4

    if ipv4.scanned(b"\n1.2.3.4") is None:
        pytest.skip("no Hyperscan here: a large text always goes through the arrays")
    sparse_lines = [p.read_text("ascii", "replace") for p in LOGS]
    sparse = ("\n" + "\n".join(sparse_lines * 3)).encode()
    dense_text = ("\n" + "\n".join(f"from 10.{i % 250}.{i % 7}.{i % 199} to 192.168.{i % 3}.1"
                                   for i in range(60_000))).encode()
    cut = sparse.find(b"\n", ipv4.PROBE)
    at_cut = sparse[:cut - 17] + b" from 10.20.30.40\n10.20.30.41 " + sparse[cut + 1:]
    assert at_cut.find(b"\n", ipv4.PROBE) == cut  # one address ends there, one starts after
    for nl in (sparse, dense_text, at_cut):
        assert len(nl) >= dense.ARRAYS_ALWAYS
        matched: list = []
        dense.ipv4_matches(nl, matched)
        assert list(zip(*ipv4.large(nl))) == [(s + 1, e + 1) for s, e, _ in matched]
    assert {b"10.20.30.40", b"10.20.30.41"} <= {at_cut[s:e] for s, e in zip(*ipv4.large(at_cut))}

    def no_arrays(nl):
        raise AssertionError("the arrays were used")

    monkeypatch.setattr(ipv4, "spans", no_arrays)
    ipv4.large(sparse)  # an address every ~500 bytes: Hyperscan
    with pytest.raises(AssertionError):
        ipv4.large(dense_text)  # two a line: the arrays


def test_a_text_too_long_for_one_hyperscan_scan_goes_through_the_arrays(monkeypatch):
    """Hyperscan scans at most 2 GB at once: past that, `large` reads the arrays, not None."""
    from rlm.redact import ipv4

    if ipv4.scanned(b"\n1.2.3.4") is None:
        pytest.skip("no Hyperscan here")
    nl = ("\n" + "\n".join(f"from 10.0.{i % 250}.{i % 199} " + "ok " * 160
                            for i in range(4_000))).encode()  # sparse: Hyperscan's
    real = ipv4.scanned
    monkeypatch.setattr(ipv4, "scanned", lambda nl, start=0, end=None:
                        None if start else real(nl, start, end))  # the tail is "too long"
    assert len(nl) > dense.ARRAYS_ALWAYS
    assert ipv4.large(nl) == ipv4.spans(nl) and len(ipv4.large(nl)[0]) == 4_000
