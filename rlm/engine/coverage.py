"""Honest coverage, computed by code: what the model read, what code only scanned, what failed.

The statement is written here from counts, never by the model.
"""

from __future__ import annotations

from rlm.schemas import Coverage


def size_text(n: int) -> str:
    """Decimal units, as the report's byte counts (1 MB = 1,000,000 bytes)."""
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f} MB"
    if n >= 1000:
        return f"{n / 1000:.1f} KB"
    return f"{n} byte{'s' if n != 1 else ''}"


_mb = size_text


def finish(cov: Coverage, strategy: str, calls: int) -> Coverage:
    """Fill `complete` and `statement` from the counts already set on cov."""
    cov.complete = not cov.chunks_failed and not cov.skipped_incomplete() and not cov.interrupted()
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
              f"{'was' if one else 'were'} not read: ") + failed_list(cov.chunks_failed) + "."
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


def failed_list(failed: list, limit: int = 20) -> str:
    """Failed chunks by id, path, lines and reason; a run of consecutive chunks of one file that
    failed for the same reason (e.g. not run: budget) is one entry, so every chunk is named."""
    runs: list[list] = []
    for c in failed:
        last = runs[-1][-1] if runs else None
        if (last is not None and c.reason == last.reason and c.path == last.path
                and _num(c.chunk) == _num(last.chunk) + 1):
            runs[-1].append(c)
        else:
            runs.append([c])
    parts = []
    for r in runs[:limit]:
        a, b = r[0], r[-1]
        ids = a.chunk if len(r) == 1 else f"{a.chunk}-{b.chunk} ({len(r)} chunks)"
        parts.append(f"{ids} {a.path}:{a.line_start}-{b.line_end} ({a.reason})")
    s = "; ".join(parts)
    if len(runs) > limit:
        s += f"; and {sum(len(r) for r in runs[limit:])} more (see the JSON report)"
    return s


def _num(chunk_id: str) -> int:
    digits = "".join(ch for ch in chunk_id if ch.isdigit())
    return int(digits) if digits else -2
