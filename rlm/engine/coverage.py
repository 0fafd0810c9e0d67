"""Honest coverage, computed by code: what the model read, what code only scanned, what failed.

The statement is written here from counts, never by the model.
"""

from __future__ import annotations

from rlm.schemas import Coverage


def _mb(n: int) -> str:
    if n >= 1 << 20:
        return f"{n / (1 << 20):.1f} MB"
    if n >= 1024:
        return f"{n / 1024:.1f} KB"
    return f"{n} bytes"


def finish(cov: Coverage, strategy: str, calls: int) -> Coverage:
    """Fill `complete` and `statement` from the counts already set on cov."""
    cov.complete = not cov.chunks_failed and not cov.skipped_incomplete()
    parts: list[str] = []
    if cov.lines_scanned_by_code:
        verb = {"profile": "profiled", "grep": "searched"}.get(strategy, "scanned")
        parts.append(f"{cov.lines_scanned_by_code:,} lines ({_mb(cov.bytes_scanned_by_code)}) "
                     f"were {verb} by code")
    unit = "chunk" if cov.chunks_total == 1 else "chunks"
    parts.append(f"{cov.lines_read_by_model:,} lines ({_mb(cov.bytes_read_by_model)}) were read "
                 f"by the model in {cov.chunks_ok} of {cov.chunks_total} {unit} ({calls} calls)")
    unread = cov.lines_total - max(cov.lines_read_by_model, cov.lines_scanned_by_code)
    if strategy in ("direct", "fanout") and unread > 0 and not cov.chunks_failed:
        parts.append(f"{unread:,} lines were not read")
    s = "Coverage: " + "; ".join(parts) + "."
    if cov.chunks_failed:
        one = len(cov.chunks_failed) == 1
        s += (f" {len(cov.chunks_failed)} {'chunk' if one else 'chunks'} failed and "
              f"{'was' if one else 'were'} not read: ") + "; ".join(
            f"{c.chunk} {c.path}:{c.line_start}-{c.line_end} ({c.reason})"
            for c in cov.chunks_failed[:20])
        if len(cov.chunks_failed) > 20:
            s += f"; and {len(cov.chunks_failed) - 20} more (see the JSON report)"
        s += "."
    if cov.skipped:
        s += " Skipped: " + "; ".join(f"{x['path']} ({x['reason']})" for x in cov.skipped[:10])
        if len(cov.skipped) > 10:
            s += f"; and {len(cov.skipped) - 10} more"
        s += "."
    for d in cov.declared:
        s += f" Note: {d}."
    s += " Complete." if cov.complete else " INCOMPLETE: the answer may miss what was not read."
    cov.statement = s
    return cov
