"""The site's inline SVG: verdict strips and the gate trend, escaped and colored from a fixed palette."""

from __future__ import annotations

import re

from api.pages.charts import STATE_COLORS, UNKNOWN, StripPoint, TrendBar, gate_trend, verdict_strip
from tests.pages.seed import MARKUP


def test_strip_has_one_cell_per_point_in_order_with_state_colors():
    svg = str(verdict_strip([StripPoint("ok", "a"), StripPoint("fail", "b"), StripPoint("weird", "c")]))
    fills = re.findall(r'<rect [^>]*fill="(#[0-9a-f]{6})"', svg)
    assert fills == [STATE_COLORS["ok"], STATE_COLORS["fail"], UNKNOWN]
    xs = [int(x) for x in re.findall(r'<rect x="(\d+)"', svg)]
    assert xs == sorted(xs) and len(set(xs)) == 3


def test_strip_escapes_titles_links_and_states():
    svg = str(verdict_strip([StripPoint(MARKUP, MARKUP, '/x?a="b"')], label=MARKUP))
    assert "<script" not in svg and "<img" not in svg
    assert "&lt;script&gt;" in svg and 'href="/x?a=&#34;b&#34;"' in svg


def test_empty_strip_is_empty():
    assert str(verdict_strip([])) == ""


def test_trend_stacks_pass_warn_fail_proportionally():
    svg = str(gate_trend([TrendBar("03-01", {"pass": 2, "warn": 1, "fail": 1}, "t1"),
                          TrendBar("03-02", {"pass": 4}, "t2")]))
    first_bar = re.findall(r'height="([\d.]+)" fill="#[0-9a-f]+" data-state="(\w+)"', svg)[:3]
    heights = {state: float(h) for h, state in first_bar}
    assert heights["pass"] == 2 * heights["warn"] == 2 * heights["fail"]
    assert svg.count('data-state="pass"') == 2


def test_trend_escapes_labels():
    svg = str(gate_trend([TrendBar(MARKUP, {"pass": 1}, MARKUP, "/nightly/r")]))
    assert "<script" not in svg and "&lt;script&gt;" in svg and 'href="/nightly/r"' in svg
