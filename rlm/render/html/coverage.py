"""The coverage map: the corpus as a bar, coloured (and patterned) by what happened to it.

- ``ask``: lines, placed where they are (``coverage.map``, rlm.engine.covmap), one band per file;
- ``audit``/``mine``: one segment per file (``files``: read, scanned only, failed, skipped);
- a run recorded before the map existed: the same states as proportions of the line counts,
  and the page says that the places were not recorded.

Each segment is an SVG rect with its state, its size (``data-lines`` or ``data-files``) and a
title (hover) naming the lines and the reason of a failure. The statement follows, verbatim."""

from __future__ import annotations

from rlm.render.html.page import STATES, esc, legend

WIDTH = 1000.0  # the bar's viewBox width; segments are drawn in these units


def _rect(x: float, w: float, state: str, size: int, unit: str, title: str, y: float = 0,
          h: float = 40, extra: str = "") -> str:
    return (f'<rect class="seg" x="{x:.3f}" y="{y}" width="{w:.3f}" height="{h}" '
            f'fill="url(#pat-{state})" data-state="{state}" data-{unit}="{size}"{extra}>'
            f"<title>{esc(title)}</title></rect>")


def _bar(rects: list[str], markers: list[str], label: str, unit: str, total: int) -> str:
    return (f'<svg class="bar" role="img" aria-label="{esc(label)}" data-unit="{unit}" '
            f'data-total="{total}" viewBox="0 0 {WIDTH:.0f} 40" preserveAspectRatio="none">'
            + "".join(rects) + "".join(markers) + "</svg>")


def _marker(x: float, state: str, title: str) -> str:
    """A failed or read stretch too thin to see in the bar still shows: a notch (a triangle
    on top for a failure, at the bottom for a read), in its colour, with its title. Notches
    are not segments: the segments alone add up to the corpus."""
    colour = STATES[state][0]
    d = (f"M{x - 4:.2f},0 L{x + 4:.2f},0 L{x:.2f},10 Z" if state == "failed"
         else f"M{x - 4:.2f},40 L{x + 4:.2f},40 L{x:.2f},30 Z")
    return (f'<path class="notch" data-state="{state}" d="{d}" fill="{colour}" stroke="#fff" '
            f'stroke-width=".8"><title>{esc(title)}</title></path>')


def _line_counts(totals: dict[str, int], unit: str) -> dict[str, str]:
    return {s: f"{k:,} {unit}{'s' if k != 1 else ''}" for s, k in totals.items()}


def _ask_map(m: dict) -> str:
    total = max(1, int(m.get("lines") or 0))
    rects, markers, bands = [], [], []
    at = 0
    files = m.get("files") or []
    for f in files:
        path, n = f.get("path", "?"), int(f.get("lines") or 0)
        for a, b, state, why in f.get("segments") or []:
            state = state if state in STATES else "unread"
            x, w = (at + a - 1) / total * WIDTH, (b - a + 1) / total * WIDTH
            what = STATES[state][2] + (f": {why}" if why else "")
            if f.get("binned") and why and state != "failed":
                what = f"{STATES[state][2]} (lines here: {why})"
            title = f"{path}:{a}-{b} ({b - a + 1:,} lines) — {what}"
            rects.append(_rect(x, w, state, b - a + 1, "lines", title))
            if state in ("failed", "read") and w < 3:
                markers.append(_marker(x + w / 2, state, title))
        if len(files) > 1:
            bands.append(f'<rect x="{at / total * WIDTH:.3f}" y="0" width="{n / total * WIDTH:.3f}" '
                         f'height="12" fill="{"#d6d6dc" if len(bands) % 2 else "#ececf0"}" '
                         f'stroke="#fff"><title>{esc(path)}: {n:,} lines</title></rect>')
        at += n
    out = [legend([s for s in STATES if s in (m.get("totals") or {})] or ["unread"],
                  _line_counts(m.get("totals") or {}, "line")),
           _bar(rects, markers, f"coverage of {total:,} lines", "lines", int(m.get("lines") or 0))]
    if bands:
        out.append('<svg class="fileband" viewBox="0 0 1000 12" preserveAspectRatio="none" '
                   f'aria-label="{len(files)} files, in order">{"".join(bands)}</svg>'
                   f'<p class="small muted">{len(files)} files, left to right: '
                   + ", ".join(f"<code>{esc(f.get('path'))}</code>" for f in files[:12])
                   + (f" and {len(files) - 12} more" if len(files) > 12 else "") + "</p>")
    if any(f.get("binned") for f in files):
        out.append('<p class="small muted">Where a file has too many small stretches to draw, '
                   "it is drawn in equal slices, each showing its most important state; hover a "
                   "slice for the mix of lines in it. The counts in the legend are exact.</p>")
    out.append(_skipped(m.get("skipped") or []))
    return "".join(out)


def _skipped(skipped: list[dict]) -> str:
    if not skipped:
        return ""
    w = WIDTH / len(skipped)
    rects = [_rect(i * w, w, "skipped", 1, "files", f"{x.get('path')}: skipped ({x.get('reason')})",
                   h=16) for i, x in enumerate(skipped)]
    return (f'<p class="small">Skipped files ({len(skipped)}), not in the line bar above:</p>'
            f'<svg class="bar skipped" style="height:1rem" viewBox="0 0 1000 16" '
            f'preserveAspectRatio="none" aria-label="{len(skipped)} skipped files">'
            + "".join(rects) + "</svg>")


def _old_ask(rep: dict) -> str:
    """A run recorded before the map: the states as shares of the line counts, not places."""
    cov = rep.get("coverage") or {}
    total = int(cov.get("lines_total") or (rep.get("corpus") or {}).get("lines") or 0)
    failed = sum(max(0, int(c.get("line_end") or 0) - int(c.get("line_start") or 0) + 1)
                 for c in cov.get("chunks_failed") or [] if c.get("line_start"))
    read = int(cov.get("lines_read_by_model") or 0)
    scanned = max(0, int(cov.get("lines_scanned_by_code") or 0) - read)
    parts = {"failed": min(failed, total)}
    parts["read"] = min(read, total - parts["failed"])
    parts["scanned"] = min(scanned, total - parts["failed"] - parts["read"])
    parts["unread"] = total - sum(parts.values())
    parts = {s: k for s, k in parts.items() if k > 0}
    files = [{"path": (rep.get("corpus") or {}).get("path", "?"), "lines": total,
              "segments": [], "binned": False}]
    at = 1
    for s, k in parts.items():
        files[0]["segments"].append([at, at + k - 1, s, None])
        at += k
    note = ('<p class="small muted">This run was recorded before rlm kept where things '
            "happened: the bar shows how many lines were in each state, not where they are.</p>")
    return note + _ask_map({"lines": total, "totals": parts, "files": files,
                            "skipped": [x for x in cov.get("skipped") or [] if isinstance(x, dict)]})


def _repo_entries(fc: dict) -> list[tuple[str, str, int, str]]:
    """(state, path, files, why) for every file the walker listed, in the report's lists."""
    entries: list[tuple[str, str, int, str]] = []
    read_files = fc.get("read_files")
    if read_files is not None:
        entries += [("read", p, 1, "") for p in read_files]
    elif fc.get("read_by_model"):
        entries.append(("read", f"{fc['read_by_model']} files", int(fc["read_by_model"]),
                        "this run did not record their names"))
    entries += [("scanned", p, 1, "") for p in fc.get("scanned_only") or []]
    entries += [("failed", p, 1, "its calls failed or were not run") for p in fc.get("failed_files") or []]
    entries += [("skipped", x.get("path", "?"), int(x.get("files") or 1), x.get("reason", ""))
                for x in fc.get("skipped_files") or []]
    return entries


def _by_size(entries: list, sizes: dict[str, int], total_files: int) -> str:
    """One segment per file, as wide as its bytes, in path order; entries the walker did not
    measure (a skipped folder) in a strip of their own under it."""
    sized = sorted((e for e in entries if e[1] in sizes), key=lambda e: e[1])
    unsized = [e for e in entries if e[1] not in sizes]
    total = sum(int(sizes[e[1]]) for e in sized)
    denom = max(1, total)
    rects, notches, at = [], [], 0
    files: dict[str, int] = {}
    nbytes: dict[str, int] = {}
    for state, path, k, why in sized:
        b = int(sizes[path])
        files[state] = files.get(state, 0) + k
        nbytes[state] = nbytes.get(state, 0) + b
        title = (f"{path} — {b:,} bytes ({b / denom:.1%} of the corpus) — {STATES[state][2]}"
                 + (f" ({why})" if why else ""))
        x, w = at / denom * WIDTH, b / denom * WIDTH
        rects.append(_rect(x, w, state, b, "bytes", title,
                           extra=f' data-files="{k}" data-path="{esc(path)}"'))
        if state == "failed" and w < 3:
            notches.append(_marker(x + w / 2, state, title))
        at += b
    measured = dict(files)
    for state, _, k, _ in unsized:
        files[state] = files.get(state, 0) + k
    counts = {s: f"{n:,} file{'s' if n != 1 else ''}" + (
        "" if s not in nbytes else f", {nbytes[s]:,} bytes" if measured[s] == n
        else f" ({nbytes[s]:,} bytes in the {measured[s]:,} measured)") for s, n in files.items()}
    out = [legend([s for s in STATES if s in files], counts),
           _bar(rects, notches, f"coverage of {total:,} bytes in {len(sized):,} files", "bytes", total),
           f'<p class="small muted">Each file is as wide as its size in bytes ({total:,} bytes in '
           f"{len(sized):,} files, in path order); hover a file for its path, size and state.</p>"]
    if unsized:
        w = WIDTH / len(unsized)
        strip = [_rect(i * w, w, st, k, "files", f"{p}: {STATES[st][2]}" + (f" ({why})" if why else "")
                       + " — size not measured", h=16) for i, (st, p, k, why) in enumerate(unsized)]
        out.append(f'<p class="small">Not in the bar above ({sum(e[2] for e in unsized):,} of '
                   f"{total_files:,} files; the walker did not measure them):</p>"
                   '<svg class="bar unsized" style="height:1rem" viewBox="0 0 1000 16" '
                   f'preserveAspectRatio="none" data-unit="files" aria-label="{len(unsized)} '
                   f'entries not measured">{"".join(strip)}</svg>')
    return "".join(out)


def _repo_files(rep: dict) -> str:
    """audit and mine: one segment per file the walker listed, as wide as its bytes; a run
    recorded before sizes were kept: equal widths, and the page says so."""
    fc = rep.get("files") or {}
    total = int(fc.get("total") or 0)
    entries = _repo_entries(fc)
    sizes = fc.get("sizes")
    if isinstance(sizes, dict) and sizes:
        return _by_size(entries, sizes, total)
    shown = sum(k for _, _, k, _ in entries)
    if shown < total:  # lists cut by an older rlm: say what is not placed
        entries.append(("unread", f"{total - shown} files", total - shown,
                        "not listed in this run's record"))
    denom = max(1, max(total, shown))
    rects, at = [], 0
    counts: dict[str, int] = {}
    for state, path, k, why in entries:
        counts[state] = counts.get(state, 0) + k
        title = f"{path} — {STATES[state][2]}" + (f" ({why})" if why else "")
        rects.append(_rect(at / denom * WIDTH, k / denom * WIDTH, state, k, "files", title))
        at += k
    return (legend([s for s in STATES if s in counts], _line_counts(counts, "file"))
            + _bar(rects, [], f"coverage of {total} files", "files", total)
            + '<p class="small muted">This run did not record file sizes: each file has the '
            "same width.</p>")


def coverage_section(rep: dict) -> str:
    cov = rep.get("coverage") or {}
    if rep.get("command") in ("audit", "mine") and rep.get("files"):
        body = _repo_files(rep)
    elif cov.get("map"):
        body = _ask_map(cov["map"])
    elif rep.get("dry_run"):
        body = '<p class="muted">Dry run: nothing was read.</p>'
    else:
        body = _old_ask(rep)
    statement = cov.get("statement") or ""
    return body + (f'<p class="statement" id="coverage-statement">{esc(statement)}</p>'
                   if statement else "")
