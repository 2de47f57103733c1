"""Small inline-SVG charts for the site pages, as pure functions returning ``Markup``.

Texts (titles, labels, links) go through :func:`markupsafe.escape`; colors come
from :data:`STATE_COLORS`, never from data. No ``xmlns`` URL is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

STATE_COLORS = {
    "ok": "#2e8b57", "pass": "#2e8b57", "warn": "#c98a12", "fail": "#c0392b",
    "queued": "#3b6ea8", "running": "#3b6ea8", "failed": "#5b2333", "cancelled": "#9aa0a6",
}  # fmt: skip
UNKNOWN = "#9aa0a6"
CELL, GAP, STRIP_HEIGHT = 12, 3, 18
TREND_BAR, TREND_GAP, TREND_HEIGHT, TREND_LABEL = 26, 12, 90, 20


@dataclass(frozen=True, slots=True)
class StripPoint:
    state: str
    """A verdict (ok/warn/fail), or the diagnosis status when it has no verdict."""
    title: str
    href: str | None = None


@dataclass(frozen=True, slots=True)
class TrendBar:
    label: str
    counts: dict[str, int]
    """pass/warn/fail case counts of one run."""
    title: str
    href: str | None = None


def _link(href: str | None, body: str) -> str:
    return f'<a href="{escape(href)}">{body}</a>' if href else body


def verdict_strip(points: Sequence[StripPoint], label: str = "verdicts over time") -> Markup:
    """One colored cell per point, oldest left; each cell titled and linked to its diagnosis."""
    if not points:
        return Markup("")
    width = len(points) * (CELL + GAP) - GAP
    cells = []
    for i, point in enumerate(points):
        color = STATE_COLORS.get(point.state, UNKNOWN)
        rect = (f'<rect x="{i * (CELL + GAP)}" y="0" width="{CELL}" height="{STRIP_HEIGHT}" rx="2" '
                f'fill="{color}" data-state="{escape(point.state)}"><title>{escape(point.title)}</title></rect>')
        cells.append(_link(point.href, rect))
    return Markup(
        f'<svg class="strip" width="{width}" height="{STRIP_HEIGHT}" viewBox="0 0 {width} {STRIP_HEIGHT}" '
        f'role="img" aria-label="{escape(label)}">{"".join(cells)}</svg>')


def gate_trend(bars: Sequence[TrendBar], label: str = "gate results per run") -> Markup:
    """Stacked pass/warn/fail bars per run, oldest left, each linked to its run page."""
    if not bars:
        return Markup("")
    top = max((sum(b.counts.get(s, 0) for s in ("pass", "warn", "fail")) for b in bars), default=0) or 1
    width = len(bars) * (TREND_BAR + TREND_GAP) + TREND_GAP
    height = TREND_HEIGHT + TREND_LABEL
    parts = [f'<line x1="0" y1="{TREND_HEIGHT}" x2="{width}" y2="{TREND_HEIGHT}" stroke="#c7ccd1"/>']
    for i, bar in enumerate(bars):
        x = TREND_GAP + i * (TREND_BAR + TREND_GAP)
        y = float(TREND_HEIGHT)
        stack = []
        for state in ("pass", "warn", "fail"):
            count = bar.counts.get(state, 0)
            if count <= 0:
                continue
            h = TREND_HEIGHT * count / top
            y -= h
            stack.append(f'<rect x="{x}" y="{y:.1f}" width="{TREND_BAR}" height="{h:.1f}" '
                         f'fill="{STATE_COLORS[state]}" data-state="{state}"/>')
        body = (f'<g><title>{escape(bar.title)}</title>{"".join(stack)}'
                f'<text x="{x + TREND_BAR / 2:.1f}" y="{TREND_HEIGHT + 12}" text-anchor="middle">'
                f'{escape(bar.label)}</text></g>')
        parts.append(_link(bar.href, body))
    return Markup(
        f'<svg class="chart trend" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'role="img" aria-label="{escape(label)}">{"".join(parts)}</svg>')
