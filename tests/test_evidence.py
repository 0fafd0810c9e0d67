"""The evidence checker: models cite, code quotes."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest

from rlm.verify import evidence as ev
from rlm.verify.evidence import (
    EvidenceCheck,
    EvidenceError,
    EvidenceStats,
    check,
    find_quote,
    normalize_ws,
    parse_evidence_path,
    safe_resolve,
    verify_lines,
)

CODE = [
    "import os",                                 # 1
    "",                                          # 2
    "def load(path):",                           # 3
    "    with open(path) as fh:",                # 4
    "        return fh.read()",                  # 5
    "",                                          # 6
    "def retry_limit():",                        # 7
    "    # the limit is fixed on purpose",       # 8
    "    MAX_RETRIES = 7",                       # 9
    "    return MAX_RETRIES",                    # 10
    "",                                          # 11
    "def timeout_seconds():",                    # 12
    "    return 30  # seconds before giving up", # 13
    "",                                          # 14
    "def long_call(a,",                          # 15
    "              b):",                         # 16
    "    return a + b",                          # 17
] + [f"# filler {i}" for i in range(18, 41)] + [  # 18..40
    "def far_away():",                           # 41
    "    SECRET_FLAG = 'enable-unsafe-mode'",    # 42
    "    return SECRET_FLAG",                    # 43
]


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "mod.py").write_text("\n".join(CODE) + "\n", encoding="utf-8")
    (root / "README.md").write_text("hello\nworld", encoding="utf-8")  # no trailing newline
    ev.clear_cache()
    return root


# ------------------------------------------------------------------ normalize / find_quote


def test_normalize_ws():
    assert normalize_ws("  a \t b\n\n c  ") == "a b c"
    assert normalize_ws("\n\t ") == ""
    assert normalize_ws("x") == "x"


def test_find_quote_single_line():
    assert find_quote(CODE, 1, "MAX_RETRIES = 7") == (9, 9)
    # first_line offsets the answer
    assert find_quote(CODE[6:12], 7, "MAX_RETRIES = 7") == (9, 9)


def test_find_quote_across_line_break():
    assert find_quote(CODE, 1, "def long_call(a, b):") == (15, 16)
    assert find_quote(CODE, 1, "fh:\n        return fh.read()") == (4, 5)


def test_find_quote_across_blank_lines():
    assert find_quote(["x", "end of", "", "   ", "sentence here", "y"], 10, "of sentence") == (11, 14)


def test_find_quote_big_input_is_fast():
    lines = [f"2024-01-01 INFO svc-{i % 5} req={i} ok" for i in range(200_000)]
    lines[150_000] = "2024-01-01 ERROR panic TXN-4444"
    assert find_quote(lines, 1, "ERROR  panic TXN-4444") == (150_001, 150_001)


def test_find_quote_whitespace_differences():
    assert find_quote(CODE, 1, "   return   30  #\tseconds  ") == (13, 13)
    assert find_quote(["a\tb   c"], 5, "a b c") == (5, 5)


def test_find_quote_prefers_shortest_then_earliest():
    lines = ["alpha", "beta gamma", "x", "beta gamma", "alpha beta"]
    # "alpha beta" occurs across lines 1-2 and inside line 5: the one-line span wins
    assert find_quote(lines, 1, "alpha beta") == (5, 5)
    # two one-line occurrences: the earliest wins
    assert find_quote(lines, 1, "beta gamma") == (2, 2)


def test_find_quote_empty_or_missing():
    assert find_quote(CODE, 1, "") is None
    assert find_quote(CODE, 1, "  \n ") is None
    assert find_quote(CODE, 1, "not in there") is None
    assert find_quote([], 1, "x") is None


# ------------------------------------------------------------------ parse_evidence_path


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("pkg/mod.py:12-20", ("pkg/mod.py", 12, 20)),
        ("pkg/mod.py:12", ("pkg/mod.py", 12, 12)),
        ("pkg/mod.py#L12-L20", ("pkg/mod.py", 12, 20)),
        ("pkg/mod.py#L7", ("pkg/mod.py", 7, 7)),
        ("pkg/mod.py:L3-L4", ("pkg/mod.py", 3, 4)),
        ("  `a b/c.txt:1-2`  ", ("a b/c.txt", 1, 2)),
        ("weird:name.py:5-6", ("weird:name.py", 5, 6)),
        ("x.py:3–9", ("x.py", 3, 9)),  # en dash
    ],
)
def test_parse_evidence_path_variants(raw, expected):
    assert parse_evidence_path(raw) == expected


@pytest.mark.parametrize(
    "raw, fragment",
    [
        ("pkg/mod.py", "expected"),
        ("pkg/mod.py:", "expected"),
        ("pkg/mod.py:a-b", "expected"),
        (":12-20", "expected"),
        ("pkg/mod.py:20-12", "before start"),
        ("pkg/mod.py:0-3", "start at 1"),
        ("", "expected"),
    ],
)
def test_parse_evidence_path_bad(raw, fragment):
    with pytest.raises(ValueError) as info:
        parse_evidence_path(raw)
    assert fragment in str(info.value)
    assert repr(raw) in str(info.value)


# ------------------------------------------------------------------ safe_resolve


def test_safe_resolve_ok(repo: Path):
    assert safe_resolve(repo, "pkg/mod.py") == (repo / "pkg" / "mod.py").resolve()
    assert safe_resolve(repo, "./pkg/mod.py") == (repo / "pkg" / "mod.py").resolve()


@pytest.mark.parametrize(
    "rel, fragment",
    [
        ("../outside.txt", "'..'"),
        ("pkg/../../outside.txt", "'..'"),
        ("/etc/passwd", "absolute"),
        ("C:\\Windows\\win.ini", "absolute"),
        ("pkg/missing.py", "no such file"),
        ("pkg", "folder"),
        ("", "empty"),
    ],
)
def test_safe_resolve_rejects(repo: Path, rel: str, fragment: str):
    (repo.parent / "outside.txt").write_text("secret\n")
    with pytest.raises(EvidenceError) as info:
        safe_resolve(repo, rel)
    assert fragment in str(info.value)


def test_safe_resolve_symlink_out_of_root(repo: Path):
    outside = repo.parent / "outside.txt"
    outside.write_text("secret\n")
    (repo / "link.txt").symlink_to(outside)
    (repo / "linkdir").symlink_to(repo.parent)
    with pytest.raises(EvidenceError, match="outside"):
        safe_resolve(repo, "link.txt")
    with pytest.raises(EvidenceError, match="outside"):
        safe_resolve(repo, "linkdir/outside.txt")


def test_safe_resolve_symlink_inside_root_is_fine(repo: Path):
    (repo / "alias.py").symlink_to(repo / "pkg" / "mod.py")
    assert safe_resolve(repo, "alias.py") == (repo / "pkg" / "mod.py").resolve()


def test_evidence_error_is_value_error():
    assert issubclass(EvidenceError, ValueError)


# ------------------------------------------------------------------ check


def test_check_exact_quote_verified(repo: Path):
    res = check(repo, "pkg/mod.py:7-10", "MAX_RETRIES = 7")
    assert res.status == "verified"
    assert (res.path, res.line_start, res.line_end) == ("pkg/mod.py", 7, 10)
    assert res.text == "\n".join(CODE[6:10])
    assert res.reason == ""
    assert res.ok and res.evidence_path == "pkg/mod.py:7-10"


def test_check_quote_elsewhere_in_file_rejected(repo: Path):
    res = check(repo, "pkg/mod.py:3-5", "SECRET_FLAG = 'enable-unsafe-mode'")
    assert res.status == "rejected"
    assert "quote not found at or near pkg/mod.py:3-5" in res.reason
    assert "42" in res.reason  # says where it really is, without accepting it
    assert (res.line_start, res.line_end) == (3, 5)
    assert not res.ok


def test_check_range_off_by_a_few_lines_corrected(repo: Path):
    # the model cited 11-12, the quote is on line 9
    res = check(repo, "pkg/mod.py:11-12", "MAX_RETRIES = 7")
    assert res.status == "corrected"
    assert (res.line_start, res.line_end) == (9, 9)
    assert res.text == "    MAX_RETRIES = 7"
    assert "pkg/mod.py:9" in res.reason and "pkg/mod.py:11-12" in res.reason
    # below the cited range as well
    res = check(repo, "pkg/mod.py:10", "return 30  # seconds before giving up")
    assert res.status == "corrected"
    assert (res.line_start, res.line_end) == (13, 13)


def test_check_correction_prefers_nearest_occurrence(repo: Path):
    lines = ["return None", "a", "b", "c", "d", "e", "f", "g", "h", "i", "return None", "z"]
    res = verify_lines(lines, "f.py", 9, 9, "return None", window=8)
    assert res.status == "corrected"
    assert (res.line_start, res.line_end) == (11, 11)


def test_check_outside_window_rejected(repo: Path):
    res = check(repo, "pkg/mod.py:20", "MAX_RETRIES = 7", window=5)
    assert res.status == "rejected"
    res = check(repo, "pkg/mod.py:20", "MAX_RETRIES = 7", window=11)
    assert res.status == "corrected" and res.line_start == 9


def test_check_quote_across_line_break_verified(repo: Path):
    res = check(repo, "pkg/mod.py:15-16", "def long_call(a, b):")
    assert res.status == "verified"
    assert (res.line_start, res.line_end) == (15, 16)
    assert res.text == "def long_call(a,\n              b):"
    # cited only the first of the two lines: corrected to cover both
    res = check(repo, "pkg/mod.py:15", "def long_call(a, b):")
    assert res.status == "corrected"
    assert (res.line_start, res.line_end) == (15, 16)


def test_check_whitespace_differences_verified(repo: Path):
    res = check(repo, "pkg/mod.py:13", "return 30 #   seconds\tbefore giving up")
    assert res.status == "verified"
    assert res.text == CODE[12]


def test_check_missing_file(repo: Path):
    res = check(repo, "pkg/nope.py:1-2", "x")
    assert res.status == "rejected"
    assert "no such file" in res.reason
    assert res.text == ""


@pytest.mark.parametrize("cited", ["../outside.txt:1", "/etc/passwd:1", "link.txt:1"])
def test_check_path_escapes_rejected_without_exception(repo: Path, cited: str):
    outside = repo.parent / "outside.txt"
    outside.write_text("secret\n")
    (repo / "link.txt").symlink_to(outside)
    res = check(repo, cited, "secret")
    assert res.status == "rejected"
    assert res.text == ""  # nothing from outside the root leaks into the evidence


def test_check_unparseable_path(repo: Path):
    res = check(repo, "pkg/mod.py line 9", "MAX_RETRIES")
    assert res.status == "rejected"
    assert res.line_start == 0 and res.line_end == 0
    assert "bad evidence path" in res.reason


def test_check_start_beyond_eof(repo: Path):
    res = check(repo, "pkg/mod.py:44-50", "return SECRET_FLAG")
    assert res.status == "rejected"
    assert "43 lines" in res.reason


def test_check_end_beyond_eof(repo: Path):
    # the quote is there, near the cited range: corrected
    res = check(repo, "pkg/mod.py:42-60", "return SECRET_FLAG")
    assert res.status == "corrected"
    assert (res.line_start, res.line_end) == (43, 43)
    assert "past the end" in res.reason
    # without a quote the range must exist
    res = check(repo, "pkg/mod.py:42-60", None, require_quote=False)
    assert res.status == "rejected"
    # the last line of a file without a trailing newline exists
    res = check(repo, "README.md:2", "world")
    assert res.status == "verified" and res.text == "world"


def test_check_without_quote(repo: Path):
    res = check(repo, "pkg/mod.py:9", None)
    assert res.status == "rejected" and res.reason == "no quote to check"
    res = check(repo, "pkg/mod.py:9", "   ")
    assert res.status == "rejected" and res.reason == "no quote to check"
    res = check(repo, "pkg/mod.py:9-10", None, require_quote=False)
    assert res.status == "verified"
    assert res.text == "    MAX_RETRIES = 7\n    return MAX_RETRIES"


def test_check_wide_range_narrowed(repo: Path):
    res = check(repo, "pkg/mod.py:1-43", "MAX_RETRIES = 7", max_span=20)
    assert res.status == "corrected"
    assert (res.line_start, res.line_end) == (9, 9)
    res = check(repo, "pkg/mod.py:1-43", "MAX_RETRIES = 7")  # default max_span 200
    assert res.status == "verified" and (res.line_start, res.line_end) == (1, 43)


def test_check_text_capped(tmp_path: Path):
    (tmp_path / "big.txt").write_text("\n".join("x" * 100 for _ in range(100)) + "\n")
    res = check(tmp_path, "big.txt:1-100", "x" * 100)
    assert res.status == "verified"
    assert len(res.text) <= ev.TEXT_CAP
    assert res.text.endswith("[…]")


def test_check_invalid_utf8_and_crlf(tmp_path: Path):
    (tmp_path / "w.txt").write_bytes(b"caf\xe9 ok\r\nsecond line\r\n")
    res = check(tmp_path, "w.txt:1", "ok")
    assert res.status == "verified"
    assert res.text == "caf\ufffd ok"
    res = check(tmp_path, "w.txt:2", "second line")
    assert res.status == "verified" and res.text == "second line"


def test_check_gz_read_decompressed(tmp_path: Path):
    with gzip.open(tmp_path / "log.gz", "wt") as fh:
        fh.write("one\ntwo\nTXN-4444 panic\n")
    res = check(tmp_path, "log.gz:3", "TXN-4444")
    assert res.status == "verified" and res.text == "TXN-4444 panic"


def test_check_custom_line_reader(repo: Path):
    seen = []

    def reader(p: Path):
        seen.append(p)
        return ["alpha", "beta"]

    res = check(repo, "pkg/mod.py:2", "beta", line_reader=reader)
    assert res.status == "verified" and res.text == "beta"
    assert seen == [(repo / "pkg" / "mod.py").resolve()]


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read any file")
def test_check_unreadable_file(repo: Path):
    p = repo / "secret.txt"
    p.write_text("x\n")
    p.chmod(0)
    try:
        res = check(repo, "secret.txt:1", "x")
    finally:
        p.chmod(0o644)
    assert res.status == "rejected" and "cannot be read" in res.reason


def test_cache_sees_edits(repo: Path):
    p = repo / "pkg" / "mod.py"
    assert check(repo, "pkg/mod.py:9", "MAX_RETRIES = 7").status == "verified"
    st = p.stat()
    p.write_text("\n".join(CODE).replace("MAX_RETRIES = 7", "MAX_RETRIES = 8") + "\n")
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    res = check(repo, "pkg/mod.py:9", "MAX_RETRIES = 7")
    assert res.status == "rejected"


# ------------------------------------------------------------------ stats


def test_stats_counts(repo: Path):
    stats = EvidenceStats()
    stats.add(check(repo, "pkg/mod.py:9", "MAX_RETRIES = 7"))
    stats.add(check(repo, "pkg/mod.py:11", "MAX_RETRIES = 7"))
    stats.add(check(repo, "pkg/mod.py:11", "MAX_RETRIES = 70000"))
    stats.add(check(repo, "../x:1", "y"))
    assert stats.as_dict() == {"verified": 1, "corrected": 1, "rejected": 2}
    assert stats.total == 4


def test_evidence_check_fields():
    c = EvidenceCheck("verified", "a.py", 3, 3, "x", "")
    assert c.evidence_path == "a.py:3"
    assert [f for f in c.__dataclass_fields__] == [
        "status", "path", "line_start", "line_end", "text", "reason"]
