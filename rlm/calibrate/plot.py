"""A small SVG line plot written by code (stdlib only), for `rlm calibrate --plot curve.svg`.

SVG because it is text: the labels are real text in the viewer's font (no bitmap font of our
own), it scales, and a test can read the numbers back. Why not matplotlib: it would add numpy,
pillow, fonttools and more (tens of MB) to draw a handful of points.
"""

from __future__ import annotations

from pathlib import Path
from xml.sax.saxutils import escape

COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd")
GRID, AXIS, MUTED = "#e4e4e4", "#282828", "#969696"


class _Frame:
    """Maps data units to pixels inside the plot area."""

    def __init__(self, size, x_range, y_range, margins=(70, 34, 56, 60)):
        w, h = size
        left, right, top, bottom = margins
        self.left, self.right, self.top, self.bottom = left, w - right, top, h - bottom
        self.x_range, self.y_range = x_range, y_range

    def x(self, v: float) -> float:
        x0, x1 = self.x_range
        return round(self.left + (v - x0) / (x1 - x0) * (self.right - self.left), 2)

    def y(self, v: float) -> float:
        y0, y1 = self.y_range
        return round(self.bottom - (v - y0) / (y1 - y0) * (self.bottom - self.top), 2)


def _text(x: float, y: float, s: str, anchor: str = "start", size: int = 13, **attrs) -> str:
    extra = "".join(f' {k.replace("_", "-")}="{v}"' for k, v in attrs.items())
    return (f'<text x="{x}" y="{y}" font-size="{size}" text-anchor="{anchor}"{extra}>'
            f"{escape(s)}</text>")


def _axes(f: _Frame, xlabel: str, ylabel: str, ticks: int = 10) -> list[str]:
    out = []
    (x0, x1), (y0, y1) = f.x_range, f.y_range
    for k in range(ticks + 1):
        gx, gy = x0 + (x1 - x0) * k / ticks, y0 + (y1 - y0) * k / ticks
        out.append(f'<line x1="{f.x(gx)}" y1="{f.top}" x2="{f.x(gx)}" y2="{f.bottom}" '
                   f'stroke="{GRID}"/>')
        out.append(f'<line x1="{f.left}" y1="{f.y(gy)}" x2="{f.right}" y2="{f.y(gy)}" '
                   f'stroke="{GRID}"/>')
        if k % 2 == 0:
            out.append(_text(f.x(gx), f.bottom + 20, f"{gx:g}", "middle", class_="xtick"))
            out.append(_text(f.left - 8, f.y(gy) + 4, f"{gy:g}", "end", class_="ytick"))
    out.append(f'<polyline points="{f.left},{f.top} {f.left},{f.bottom} {f.right},{f.bottom}" '
               f'fill="none" stroke="{AXIS}" stroke-width="2"/>')
    mid = (f.left + f.right) / 2
    out.append(_text(mid, f.bottom + 44, xlabel, "middle", class_="xlabel"))
    out.append(_text(f.left - 48, (f.top + f.bottom) / 2, ylabel, "middle", class_="ylabel",
                     transform=f"rotate(-90 {f.left - 48} {(f.top + f.bottom) / 2})"))
    return out


def _series(f: _Frame, series: dict[str, list[tuple[float, float]]]) -> list[str]:
    out = []
    for i, (name, pts) in enumerate(series.items()):
        c = COLORS[i % len(COLORS)]
        pts = sorted(pts)
        coords = " ".join(f"{f.x(x)},{f.y(y)}" for x, y in pts)
        out.append(f'<g class="series" data-name="{escape(name)}">')
        out.append(f'<polyline points="{coords}" fill="none" stroke="{c}" stroke-width="3"/>')
        out += [f'<circle cx="{f.x(x)}" cy="{f.y(y)}" r="4" fill="{c}"><title>{escape(name)}: '
                f"{x:g}, {y:g}</title></circle>" for x, y in pts]
        out.append("</g>")
        lx, ly = f.right - 190, f.top + 16 + 20 * i  # legend
        out.append(f'<rect x="{lx}" y="{ly - 9}" width="20" height="6" fill="{c}"/>')
        out.append(_text(lx + 28, ly, name, class_="legend"))
    return out


def line_plot_svg(path: Path, series: dict[str, list[tuple[float, float]]], title: str = "",
                  xlabel: str = "", ylabel: str = "", hline: float | None = None,
                  hline_label: str = "", size: tuple[int, int] = (720, 440),
                  x_range: tuple[float, float] = (0, 100),
                  y_range: tuple[float, float] = (0, 100)) -> Path:
    """Write an SVG line plot of the series (x, y in data units) to path; returns path."""
    w, h = size
    f = _Frame(size, x_range, y_range)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
           f'viewBox="0 0 {w} {h}" font-family="sans-serif">',
           f'<rect width="{w}" height="{h}" fill="#ffffff"/>']
    out += _axes(f, xlabel, ylabel)
    if hline is not None:
        out.append(f'<line class="threshold" x1="{f.left}" y1="{f.y(hline)}" x2="{f.right}" '
                   f'y2="{f.y(hline)}" stroke="{MUTED}" stroke-dasharray="6 6"/>')
        if hline_label:
            out.append(_text(f.left + 6, f.y(hline) - 6, hline_label, size=11, fill=MUTED))
    out += _series(f, series)
    if title:
        out.append(_text(f.left, 30, title, size=16, class_="title"))
    out.append("</svg>")
    path = Path(path)
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path
