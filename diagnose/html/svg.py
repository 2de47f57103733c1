"""Inline SVG charts as pure functions returning ``Markup``.

Every text that may come from a report (ids, labels, tokens) goes through
:func:`markupsafe.escape`; every number goes through :func:`_num`, and colors
come from the view-model's fixed palette. No ``xmlns`` URL is written: inline
SVG in HTML5 does not need one, and the page must not name any off-page URL.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

AXIS = "#c7ccd1"
INK = "#4a5560"
LINE = "#3b6ea8"
MARK = "#c0392b"


@dataclass(frozen=True, slots=True)
class Point:
    x: float
    y: float
    label: str
    color: str
    title: str


@dataclass(frozen=True, slots=True)
class Bar:
    label: str
    value: float
    color: str
    title: str
    opacity: float = 1.0


@dataclass(frozen=True, slots=True)
class BarGroup:
    label: str
    bars: Sequence[Bar]


def _num(value: float) -> str:
    """Format a coordinate; non-finite values collapse to 0."""
    return f"{value:.1f}" if math.isfinite(value) else "0"


def _finite(value: float) -> float:
    return value if math.isfinite(value) else 0.0


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _svg(width: int, height: int, body: Sequence[str], label: str) -> Markup:
    head = (
        f'<svg class="chart" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img" aria-label="{escape(label)}">'
    )
    return Markup(head + "".join(body) + "</svg>")


def _empty(label: str, width: int = 320, height: int = 60) -> Markup:
    text = f'<text x="{width / 2:.0f}" y="{height / 2:.0f}" class="muted" text-anchor="middle">no data</text>'
    return _svg(width, height, [text], label)


def _scale(values: Sequence[float], lo: float, hi: float) -> list[float]:
    """Map ``values`` linearly onto ``[lo, hi]``; a constant series maps to the middle."""
    finite = [_finite(v) for v in values]
    vmin, vmax = min(finite), max(finite)
    if vmax - vmin < 1e-12:
        return [(lo + hi) / 2 for _ in finite]
    return [lo + (v - vmin) / (vmax - vmin) * (hi - lo) for v in finite]


def scatter(
    points: Sequence[Point], marks: Sequence[Point] = (), *, width: int = 640, height: int = 400
) -> Markup:
    """Document map: one labelled ``circle.doc-point`` per point, one ``polygon.sample-point``
    diamond per mark (unlabelled, translucent so that stacked identical samples read darker)."""
    if not points and not marks:
        return _empty("document map", width)
    pad = 36
    every = [*points, *marks]  # one scale for both, so marks sit among the points
    xs = _scale([p.x for p in every], pad, width - pad * 3)
    ys = _scale([-p.y for p in every], pad, height - pad)
    body = [f'<rect x="0.5" y="0.5" width="{width - 1}" height="{height - 1}" fill="none" stroke="{AXIS}"/>']
    # Marks first: the documents and their labels stay on top.
    r = 4.5
    for mark, x, y in zip(marks, xs[len(points):], ys[len(points):], strict=True):
        corners = f"{_num(x)},{_num(y - r)} {_num(x + r)},{_num(y)} {_num(x)},{_num(y + r)} {_num(x - r)},{_num(y)}"
        body.append(
            f'<polygon class="sample-point" points="{corners}" fill="{mark.color}" fill-opacity="0.6" '
            f'stroke="{mark.color}" stroke-width="0.8"><title>{escape(mark.title)}</title></polygon>'
        )
    for point, x, y in zip(points, xs, ys):
        body.append(
            f'<g><circle class="doc-point" cx="{_num(x)}" cy="{_num(y)}" r="6" fill="{point.color}" '
            f'stroke="#fff" stroke-width="1.5"><title>{escape(point.title)}</title></circle>'
            f'<text x="{_num(x + 9)}" y="{_num(y + 4)}" class="pt-label">{escape(_clip(point.label, 24))}</text></g>'
        )
    return _svg(width, height, body, "document map")


def grouped_bars(groups: Sequence[BarGroup], *, height: int = 200, label: str = "bars") -> Markup:
    """Vertical grouped bars on a fixed 0..1 scale (shares and masses)."""
    if not groups:
        return _empty(label)
    bar_w, gap, pad_l, pad_b, top = 16, 18, 34, 34, 10
    width = pad_l + sum(len(g.bars) * bar_w + gap for g in groups) + gap
    base = height - pad_b
    span = base - top
    body = [f'<line x1="{pad_l}" y1="{base}" x2="{width}" y2="{base}" stroke="{AXIS}"/>']
    for tick in (0.0, 0.5, 1.0):
        y = base - tick * span
        body.append(f'<text x="{pad_l - 4}" y="{_num(y + 4)}" class="tick" text-anchor="end">{tick:g}</text>')
        body.append(f'<line x1="{pad_l}" y1="{_num(y)}" x2="{width}" y2="{_num(y)}" stroke="#eef0f2"/>')
    x = pad_l + gap
    for group in groups:
        for bar in group.bars:
            value = min(max(_finite(bar.value), 0.0), 1.0)
            h = value * span
            body.append(
                f'<rect class="bar" x="{x}" y="{_num(base - h)}" width="{bar_w}" height="{_num(h)}" '
                f'fill="{bar.color}" fill-opacity="{bar.opacity:.2f}"><title>{escape(bar.title)}</title></rect>'
            )
            x += bar_w
        mid = x - len(group.bars) * bar_w / 2
        body.append(
            f'<text x="{_num(mid)}" y="{base + 16}" class="tick" text-anchor="middle">'
            f"{escape(_clip(group.label, 14))}</text>"
        )
        x += gap
    return _svg(int(width), height, body, label)


def horizontal_bars(bars: Sequence[Bar], *, width: int = 360, label: str = "bars") -> Markup:
    """Horizontal bars scaled to the largest value, labelled on the left."""
    if not bars:
        return _empty(label, width)
    row, label_w, top = 20, 110, 4
    height = top * 2 + row * len(bars)
    peak = max(_finite(b.value) for b in bars) or 1.0
    avail = width - label_w - 40
    body: list[str] = []
    for i, bar in enumerate(bars):
        y = top + i * row
        w = max(_finite(bar.value), 0.0) / peak * avail
        body.append(
            f'<text x="{label_w - 6}" y="{y + 14}" class="tick mono" text-anchor="end">'
            f"{escape(_clip(bar.label, 16))}</text>"
            f'<rect class="bar" x="{label_w}" y="{y + 3}" width="{_num(w)}" height="{row - 6}" fill="{bar.color}">'
            f"<title>{escape(bar.title)}</title></rect>"
            f'<text x="{_num(label_w + w + 4)}" y="{y + 14}" class="tick">{bar.value:g}</text>'
        )
    return _svg(width, height, body, label)


def entropy_line(
    values: Sequence[float], marks: Sequence[int], *, width: int = 520, height: int = 180
) -> Markup:
    """Polyline of entropy per generated position; ``marks`` are bifurcation positions."""
    if not values:
        return _empty("entropy by position", width)
    pad_l, pad_b, top, right = 38, 24, 10, 10
    base = height - pad_b
    peak = max(max(_finite(v) for v in values), 1e-9)
    last = max(len(values) - 1, 1)

    def px(i: float) -> float:
        return pad_l + i / last * (width - pad_l - right)

    def py(v: float) -> float:
        return base - max(_finite(v), 0.0) / peak * (base - top)

    body = [
        f'<line x1="{pad_l}" y1="{base}" x2="{width - right}" y2="{base}" stroke="{AXIS}"/>',
        f'<line x1="{pad_l}" y1="{top}" x2="{pad_l}" y2="{base}" stroke="{AXIS}"/>',
        f'<text x="{pad_l - 4}" y="{top + 8}" class="tick" text-anchor="end">{peak:.2g}</text>',
        f'<text x="{pad_l - 4}" y="{base}" class="tick" text-anchor="end">0</text>',
        f'<text x="{width - right}" y="{height - 6}" class="tick" text-anchor="end">position {len(values) - 1}</text>',
    ]
    for pos in marks:
        if 0 <= pos < len(values):
            x = _num(px(pos))
            body.append(
                f'<line class="bifurcation" x1="{x}" y1="{top}" x2="{x}" y2="{base}" stroke="{MARK}" '
                f'stroke-dasharray="3 3"><title>bifurcation at position {pos}</title></line>'
            )
    coords = " ".join(f"{_num(px(i))},{_num(py(v))}" for i, v in enumerate(values))
    body.append(f'<polyline points="{coords}" fill="none" stroke="{LINE}" stroke-width="1.8"/>')
    return _svg(width, height, body, "entropy by position")
