"""The page's gravity-center views: colors, the document map with the sampled
outputs placed among the documents, and each center's mass next to its pull."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from markupsafe import Markup

from diagnose.html import svg
from diagnose.report import InputReport, SamplingReport, TemperatureRun

PALETTE = ("#3b6ea8", "#e08a2c", "#3a9a6b", "#b5487a", "#7a5fb0", "#2b9aa8", "#b89a2e", "#a0522d")
GREY = "#9aa0a6"
NONE = "none"
SNIPPET = 80
"""Characters of sample text in a map tooltip."""


@dataclass(frozen=True, slots=True)
class LegendItem:
    label: str
    color: str
    shape: str = "dot"
    """CSS class of the swatch: ``dot`` (a document) or ``diamond`` (a sampled output)."""


@dataclass(frozen=True, slots=True)
class MassPullRow:
    center: str
    color: str
    mass: str
    pulls: list[str]
    """Sampled pull at each temperature, in ``MassPullTable.temperatures`` order."""


@dataclass(frozen=True, slots=True)
class MassPullTable:
    temperatures: list[str]
    rows: list[MassPullRow]


def center_colors(inp: InputReport) -> dict[str, str]:
    return {c.id: PALETTE[i % len(PALETTE)] for i, c in enumerate(inp.gravity_centers)}


def document_map(
    inp: InputReport, sampling: SamplingReport | None, colors: Mapping[str, str]
) -> tuple[Markup, list[LegendItem]]:
    """The map's SVG (documents as labelled dots, samples as diamonds) and its legend."""
    labels = {c.id: c.label for c in inp.gravity_centers}
    points = [
        svg.Point(
            x=d.position[0] if len(d.position) > 0 else 0.0,
            y=d.position[1] if len(d.position) > 1 else 0.0,
            label=d.id,
            color=colors.get(d.center, GREY) if d.center else GREY,
            title=f"{d.id} · {labels.get(d.center, d.center) if d.center else 'noise'} · relevance {d.relevance:.2f}",
        )
        for d in inp.documents
    ]
    marks = [
        svg.Point(
            x=s.position[0],
            y=s.position[1],
            label="",
            color=colors.get(s.center, GREY),
            title=f"T={run.temperature:g} · seed {s.seed} · {s.center} · {_snippet(s.text)}",
        )
        for run in (sampling.runs if sampling else [])
        for s in run.samples
        if len(s.position) == 2  # no frame (fewer than 2 documents): nothing to place
    ]
    legend = [LegendItem(f"{c.id}: {c.label}", colors[c.id]) for c in inp.gravity_centers]
    legend.append(LegendItem("noise", GREY))
    if marks:
        label = f"sampled output ({len(marks)}, all temperatures), colored by the center it followed"
        legend.append(LegendItem(label, svg.INK, "diamond"))
    return svg.scatter(points, marks), legend


def mass_vs_pull(inp: InputReport, sampling: SamplingReport, colors: Mapping[str, str]) -> MassPullTable:
    """One row per center (then "none"): input mass, then sampled pull at each temperature."""
    labels = {c.id: c.label for c in inp.gravity_centers}
    masses = {c.id: c.mass for c in inp.gravity_centers}
    extra = {k for run in sampling.runs for k in run.center_pull if k not in masses and k != NONE}
    rows = [
        MassPullRow(
            center=f"{cid}: {labels[cid]}" if cid in labels else cid,
            color=colors.get(cid, GREY),
            mass=f"{masses[cid]:.2f}" if cid in masses else "—",
            pulls=[f"{run.center_pull.get(cid, 0.0):.2f}" for run in sampling.runs],
        )
        for cid in [*masses, *sorted(extra), NONE]
    ]
    return MassPullTable([f"{run.temperature:g}" for run in sampling.runs], rows)


def pull_groups(run: TemperatureRun, inp: InputReport, colors: Mapping[str, str]) -> list[svg.BarGroup]:
    masses = {c.id: c.mass for c in inp.gravity_centers}
    ids = list(masses) + [k for k in run.center_pull if k not in masses and k != NONE] + [NONE]
    groups = []
    for cid in ids:
        color = colors.get(cid, GREY)
        mass, pull = masses.get(cid, 0.0), run.center_pull.get(cid, 0.0)
        bars = [
            svg.Bar("mass", mass, color, f"{cid}: input mass {mass:.2f}", opacity=0.35),
            svg.Bar("pull", pull, color, f"{cid}: sampled pull {pull:.2f} at T={run.temperature:g}"),
        ]
        groups.append(svg.BarGroup(cid, bars))
    return groups


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SNIPPET else flat[: SNIPPET - 1] + "…"
