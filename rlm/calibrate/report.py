"""The calibration curve for people: a plain-text table, summary lines and an SVG plot."""

from __future__ import annotations

from pathlib import Path

from rlm.calibrate.profile import THRESHOLD


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x:.0%}"


def curve_table(prof: dict) -> str:
    """The curve as a plain-text table (also valid Markdown)."""
    rows = ["| fill | prompt tokens | needle | synthesis |", "|---:|---:|---:|---:|"]
    for r in prof["curve"]:
        err = ""
        if r.get("needle_errors") or r.get("synthesis_errors"):
            err = f" ({r.get('needle_errors', 0) + r.get('synthesis_errors', 0)} failed calls)"
        rows.append(f"| {r['level']:.0%} | {r['tokens']:,} | {_pct(r['needle'])} | "
                    f"{_pct(r['synthesis'])}{err} |")
    return "\n".join(rows)


def summary_lines(prof: dict) -> list[str]:
    def bp(b):
        return "none (below 90% already at the smallest fill)" if not b else \
            f"{b['level']:.0%} fill = {b['tokens']:,} tokens ({b['accuracy']:.0%})"

    out = [f"model {prof['model']}, context {prof['context_tokens']:,} tokens, "
           f"{prof['reps']} repetition(s) per level, {prof['usage']['calls']} calls, "
           f"{prof['usage']['wall_s']}s",
           f"needle breakpoint: {bp(prof['needle_breakpoint'])}",
           f"synthesis breakpoint: {bp(prof['synthesis_breakpoint'])}"]
    w = prof.get("usable_window_tokens")
    out.append(f"usable window: {w:,} tokens per call (80% of the synthesis breakpoint)" if w else
               "usable window: not set (synthesis never reached 90%); the default window stays")
    return out


def plot_profile(prof: dict, path: str | Path) -> Path:
    """Write the accuracy-vs-fill curve of both tasks as an SVG file."""
    from rlm.calibrate.plot import line_plot_svg

    pts = {name: [(r["level"] * 100, r[name] * 100) for r in prof["curve"] if r[name] is not None]
           for name in ("needle", "synthesis")}
    return line_plot_svg(Path(path), pts, title=f"accuracy vs fill: {prof['model']}",
                         xlabel="fill % of context", ylabel="accuracy %",
                         hline=THRESHOLD * 100, hline_label=f"{THRESHOLD:.0%} threshold")
