"""The one binary test for every command (walker, probe, folders): text or not, from 8 KiB."""

from __future__ import annotations

import os

SNIFF_BYTES = 8192
_WS_CONTROL_OK = frozenset(b"\t\n\r\f\b\x1b")


def is_binary(path_or_bytes: bytes | bytearray | memoryview | str | os.PathLike) -> bool:
    """True when the content looks binary: a NUL byte in the first 8 KiB, or a high share of
    control characters (over 30% of the decoded text when it is valid UTF-8; over 10% of the
    bytes when it is not, i.e. legacy 8-bit text is still text). Empty content is text.

    Given a path, reads its first 8 KiB (OSError propagates)."""
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        sample = bytes(path_or_bytes[:SNIFF_BYTES])
    else:
        from rlm.corpus.beneath import open_file

        with open_file(path_or_bytes) as fh:
            sample = fh.read(SNIFF_BYTES)
    if not sample:
        return False
    if b"\x00" in sample:
        return True
    text: str | None
    try:
        text = sample.decode("utf-8")
    except UnicodeDecodeError as e:
        # The 8 KiB cut may split a multi-byte character: that is not a decoding failure.
        if e.reason == "unexpected end of data" and e.end == len(sample):
            text = sample[: e.start].decode("utf-8", errors="replace")
        else:
            text = None
    if text is not None:
        if not text:
            return False
        ctrl = sum(1 for ch in text if (ord(ch) < 32 and ch not in "\t\n\r\f\b\x1b") or ch == "\x7f")
        return ctrl / len(text) > 0.30
    ctrl = sum(1 for b in sample if (b < 32 and b not in _WS_CONTROL_OK) or b == 0x7F)
    return ctrl / len(sample) > 0.10
