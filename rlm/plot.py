"""A tiny PNG line plot (stdlib only: zlib + struct), for `rlm calibrate --plot`.

Why not matplotlib: it would add numpy, pillow, fonttools and more (tens of MB) to draw one
optional picture of a handful of points. This draws axes, a grid, a dashed threshold line,
one polyline with markers per series, a legend and labels in a built-in 5x7 bitmap font.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

_FONT_ROWS = {
    "0": "01110 10001 10011 10101 11001 10001 01110", "1": "00100 01100 00100 00100 00100 00100 01110",
    "2": "01110 10001 00001 00010 00100 01000 11111", "3": "11111 00010 00100 00010 00001 10001 01110",
    "4": "00010 00110 01010 10010 11111 00010 00010", "5": "11111 10000 11110 00001 00001 10001 01110",
    "6": "00110 01000 10000 11110 10001 10001 01110", "7": "11111 00001 00010 00100 01000 01000 01000",
    "8": "01110 10001 10001 01110 10001 10001 01110", "9": "01110 10001 10001 01111 00001 00010 01100",
    "A": "01110 10001 10001 11111 10001 10001 10001", "B": "11110 10001 10001 11110 10001 10001 11110",
    "C": "01110 10001 10000 10000 10000 10001 01110", "D": "11100 10010 10001 10001 10001 10010 11100",
    "E": "11111 10000 10000 11110 10000 10000 11111", "F": "11111 10000 10000 11110 10000 10000 10000",
    "G": "01110 10001 10000 10111 10001 10001 01111", "H": "10001 10001 10001 11111 10001 10001 10001",
    "I": "01110 00100 00100 00100 00100 00100 01110", "J": "00111 00010 00010 00010 00010 10010 01100",
    "K": "10001 10010 10100 11000 10100 10010 10001", "L": "10000 10000 10000 10000 10000 10000 11111",
    "M": "10001 11011 10101 10101 10001 10001 10001", "N": "10001 10001 11001 10101 10011 10001 10001",
    "O": "01110 10001 10001 10001 10001 10001 01110", "P": "11110 10001 10001 11110 10000 10000 10000",
    "Q": "01110 10001 10001 10001 10101 10010 01101", "R": "11110 10001 10001 11110 10100 10010 10001",
    "S": "01111 10000 10000 01110 00001 00001 11110", "T": "11111 00100 00100 00100 00100 00100 00100",
    "U": "10001 10001 10001 10001 10001 10001 01110", "V": "10001 10001 10001 10001 10001 01010 00100",
    "W": "10001 10001 10001 10101 10101 10101 01010", "X": "10001 10001 01010 00100 01010 10001 10001",
    "Y": "10001 10001 10001 01010 00100 00100 00100", "Z": "11111 00001 00010 00100 01000 10000 11111",
    "%": "11000 11001 00010 00100 01000 10011 00011", ".": "00000 00000 00000 00000 00000 01100 01100",
    ",": "00000 00000 00000 00000 01100 00100 01000", ":": "00000 01100 01100 00000 01100 01100 00000",
    "-": "00000 00000 00000 11111 00000 00000 00000", "_": "00000 00000 00000 00000 00000 00000 11111",
    "(": "00010 00100 01000 01000 01000 00100 00010", ")": "01000 00100 00010 00010 00010 00100 01000",
    "/": "00000 00001 00010 00100 01000 10000 00000", "=": "00000 00000 11111 00000 11111 00000 00000",
    "?": "01110 10001 00001 00010 00100 00000 00100", " ": "00000 00000 00000 00000 00000 00000 00000",
}
FONT = {c: [int(r, 2) for r in rows.split()] for c, rows in _FONT_ROWS.items()}

WHITE, BLACK, GREY, LIGHT = (255, 255, 255), (40, 40, 40), (150, 150, 150), (228, 228, 228)
COLORS = [(31, 119, 180), (214, 39, 40), (44, 160, 44), (148, 103, 189)]


class Canvas:
    def __init__(self, w: int, h: int):
        self.w, self.h = w, h
        self.px = bytearray(bytes(WHITE) * (w * h))

    def set(self, x: int, y: int, c) -> None:
        if 0 <= x < self.w and 0 <= y < self.h:
            i = 3 * (y * self.w + x)
            self.px[i:i + 3] = bytes(c)

    def rect(self, x0: int, y0: int, x1: int, y1: int, c) -> None:
        for y in range(max(0, y0), min(self.h, y1 + 1)):
            for x in range(max(0, x0), min(self.w, x1 + 1)):
                self.set(x, y, c)

    def line(self, x0: int, y0: int, x1: int, y1: int, c, width: int = 1, dash: int = 0) -> None:
        dx, dy = abs(x1 - x0), -abs(y1 - y0)
        sx, sy = (1 if x0 < x1 else -1), (1 if y0 < y1 else -1)
        err, n = dx + dy, 0
        while True:
            if not dash or (n // dash) % 2 == 0:
                self.rect(x0 - width // 2, y0 - width // 2, x0 + (width - 1) // 2,
                          y0 + (width - 1) // 2, c)
            n += 1
            if x0 == x1 and y0 == y1:
                break
            e2 = 2 * err
            if e2 >= dy:
                err += dy
                x0 += sx
            if e2 <= dx:
                err += dx
                y0 += sy

    def text(self, x: int, y: int, s: str, c=BLACK, scale: int = 2) -> int:
        """Draw s with its top-left at (x, y); returns the width drawn."""
        cx = x
        for ch in s.upper():
            rows = FONT.get(ch, FONT["?"])
            for ry, bits in enumerate(rows):
                for rx in range(5):
                    if bits & (1 << (4 - rx)):
                        self.rect(cx + rx * scale, y + ry * scale, cx + rx * scale + scale - 1,
                                  y + ry * scale + scale - 1, c)
            cx += 6 * scale
        return cx - x

    def png(self) -> bytes:
        raw = b"".join(b"\x00" + bytes(self.px[3 * y * self.w:3 * (y + 1) * self.w])
                       for y in range(self.h))

        def chunk(kind: bytes, data: bytes) -> bytes:
            return (struct.pack(">I", len(data)) + kind + data
                    + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

        return (b"\x89PNG\r\n\x1a\n"
                + chunk(b"IHDR", struct.pack(">IIBBBBB", self.w, self.h, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def text_width(s: str, scale: int = 2) -> int:
    return len(s) * 6 * scale


def line_plot_png(path: Path, series: dict[str, list[tuple[float, float]]], title: str = "",
                  xlabel: str = "", ylabel: str = "", hline: float | None = None,
                  size: tuple[int, int] = (720, 440), x_range: tuple[float, float] = (0, 100),
                  y_range: tuple[float, float] = (0, 100)) -> Path:
    """Write a PNG line plot of the series (x, y in data units) to path; returns path."""
    w, h = size
    cv = Canvas(w, h)
    left, right, top, bottom = 70, w - 34, 64, h - 60
    (x0, x1), (y0, y1) = x_range, y_range

    def px(x: float) -> int:
        return int(round(left + (x - x0) / (x1 - x0) * (right - left)))

    def py(y: float) -> int:
        return int(round(bottom - (y - y0) / (y1 - y0) * (bottom - top)))

    for k in range(0, 11):  # grid and ticks every 10%
        gx, gy = x0 + (x1 - x0) * k / 10, y0 + (y1 - y0) * k / 10
        cv.line(px(gx), top, px(gx), bottom, LIGHT)
        cv.line(left, py(gy), right, py(gy), LIGHT)
        if k % 2 == 0:
            lab = f"{gx:g}"
            cv.text(px(gx) - text_width(lab) // 2, bottom + 8, lab)
            lab = f"{gy:g}"
            cv.text(left - 8 - text_width(lab), py(gy) - 7, lab)
    cv.line(left, top, left, bottom, BLACK, 2)
    cv.line(left, bottom, right, bottom, BLACK, 2)
    if hline is not None:
        cv.line(left, py(hline), right, py(hline), GREY, 1, dash=6)
    for i, (name, pts) in enumerate(series.items()):
        c = COLORS[i % len(COLORS)]
        pts = sorted(pts)
        for (ax, ay), (bx, by) in zip(pts, pts[1:]):
            cv.line(px(ax), py(ay), px(bx), py(by), c, 3)
        for ax, ay in pts:
            cv.rect(px(ax) - 4, py(ay) - 4, px(ax) + 4, py(ay) + 4, c)
        lx, ly = right - 200, top + 10 + 22 * i  # legend
        cv.rect(lx, ly + 3, lx + 20, ly + 9, c)
        cv.text(lx + 28, ly, name)
    if title:
        cv.text(left, 8, title)
    if xlabel:
        cv.text((left + right - text_width(xlabel)) // 2, h - 26, xlabel)
    if ylabel:
        cv.text(8, top - 26, ylabel)
    path = Path(path)
    path.write_bytes(cv.png())
    return path
