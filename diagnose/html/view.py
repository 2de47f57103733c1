"""The page's view-model: plain dataclasses prepared from a :class:`Report`.

All formatting, ordering, grouping and coloring happens here, so the template
only loops and branches. Strings stay raw (the template autoescapes them);
chart fields are ``Markup`` built by :mod:`diagnose.html.svg`, which escapes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup

from diagnose.html import svg
from diagnose.html.repairs import RepairsView, build_repairs
from diagnose.html.centers import (
    GREY, PALETTE, LegendItem, MassPullTable, center_colors, document_map, mass_vs_pull, pull_groups,
)  # fmt: skip
from diagnose.report import Finding, InputReport, Report, SamplingReport, TemperatureRun
from diagnose.display import fixed
from diagnose.verdict_lines import basis_lines

METRICS = (
    "temperature", "n", "first_token_divergence", "mean_entropy", "perplexity",
    "repetition_rate", "semantic_entropy", "compliance_rate", "truncation_rate",
)  # fmt: skip
ABLATION_COLUMNS = (
    "variant", "documents", "temperature", "mean_entropy", "semantic_entropy", "first_token_divergence",
)  # fmt: skip
ENV_SUMMARY = ("model", "model_id", "revision", "model_hash", "dtype", "device", "embedder")
TOP_FIRST_TOKENS = 12


@dataclass(frozen=True, slots=True)
class KeyValue:
    key: str
    value: str
    block: bool = False
    """True when ``value`` is pretty JSON, shown preformatted."""


@dataclass(frozen=True, slots=True)
class FindingRow:
    stage: str
    severity: str
    rule: str
    advice: str
    evidence: list[KeyValue]


@dataclass(frozen=True, slots=True)
class DocumentRow:
    id: str
    center: str
    answer: str
    claim: str
    read_answer: str
    """The generator's own answer from this document alone ("" in the static tier)."""
    marks: str = ""
    """The case's authority and date for the document ("" when it gives none)."""


@dataclass(frozen=True, slots=True)
class CenterRow:
    id: str
    label: str
    mass: str
    documents: list[str]
    color: str


@dataclass(frozen=True, slots=True)
class PairRow:
    a: str
    b: str
    kind: str
    evidence: str


@dataclass(frozen=True, slots=True)
class InputView:
    facts: list[KeyValue]
    document_map: Markup
    legend: list[LegendItem]
    centers: list[CenterRow]
    pairs: list[PairRow]
    noise: list[str]
    instruction_conflicts: list[str]
    documents: list[DocumentRow] = field(default_factory=list)
    read: bool = False
    """The read tier made the centers (show each document's own answer)."""
    marked: bool = False
    """The case marks some document's authority or date (show the column)."""


@dataclass(frozen=True, slots=True)
class SampleRow:
    seed: int
    finish_reason: str
    center: str
    color: str
    tokens: int
    compliant: bool
    text: str


@dataclass(frozen=True, slots=True)
class ClusterGroup:
    index: int
    samples: list[SampleRow]


@dataclass(frozen=True, slots=True)
class BifurcationRow:
    position: int
    context: str
    candidates: list[str]
    margin: str


@dataclass(frozen=True, slots=True)
class RunView:
    anchor: str
    temperature: str
    pull_chart: Markup
    first_token_chart: Markup
    entropy_chart: Markup
    bifurcations: list[BifurcationRow]
    clusters: list[ClusterGroup]


@dataclass(frozen=True, slots=True)
class SamplingView:
    facts: list[KeyValue]
    metric_names: tuple[str, ...]
    metric_rows: list[list[str]]
    runs: list[RunView]
    mass_vs_pull: MassPullTable
    ablation_names: tuple[str, ...] = ()
    ablation_rows: list[list[str]] = field(default_factory=list)
    prompt: str = ""
    """The prompt the model saw: after its chat template when the report has it, else the messages."""
    prompt_source: str = ""


@dataclass(frozen=True, slots=True)
class PageView:
    case_id: str
    verdict: str
    summary: list[KeyValue]
    findings: list[FindingRow]
    input: InputView
    sampling: SamplingView | None
    environment: list[KeyValue]
    repairs: RepairsView | None = None
    """The Repairs section (``run --repair``), else None."""
    basis: list[str] = field(default_factory=list)
    """What the verdict rests on, first the finding that set it (:func:`diagnose.verdict_lines.basis_lines`)."""


def build_page(report: Report) -> PageView:
    colors = center_colors(report.input)
    return PageView(
        case_id=report.case_id,
        verdict=report.verdict,
        summary=_summary(report),
        findings=[_finding(f) for f in report.findings],
        input=_input(report.input, report.sampling, colors),
        sampling=_sampling(report.sampling, report.input, colors) if report.sampling else None,
        environment=key_values(report.environment),
        repairs=build_repairs(report),
        basis=basis_lines(report),
    )




def key_values(data: Mapping[str, Any], scalar: Callable[[Any], str] = lambda v: "null" if v is None else str(v)
               ) -> list[KeyValue]:
    """Evidence as rows: nested structures become pretty JSON blocks, the rest ``scalar(value)``."""
    rows = []
    for key, value in data.items():
        if isinstance(value, (dict, list, tuple)):
            text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
            rows.append(KeyValue(str(key), text, block=True))
        else:
            rows.append(KeyValue(str(key), scalar(value)))
    return rows


def _summary(report: Report) -> list[KeyValue]:
    env = report.environment
    rows = [KeyValue("repair", report.repair.headline)] if report.repair is not None else []
    rows += [KeyValue(k, str(env[k])) for k in ENV_SUMMARY if isinstance(env.get(k), (str, int, float))]
    if report.sampling is not None:
        runs = report.sampling.runs
        rows.append(KeyValue("backend", report.sampling.backend))
        rows.append(KeyValue("temperatures", ", ".join(f"{r.temperature:g}" for r in runs) or "—"))
        rows.append(KeyValue("samples", str(sum(r.n for r in runs))))
    else:
        rows.append(KeyValue("sampling", "not run (inputs only)"))
    return rows


def _finding(finding: Finding) -> FindingRow:
    return FindingRow(
        stage=finding.stage,
        severity=finding.severity,
        rule=finding.rule,
        advice=finding.advice,
        evidence=key_values(finding.evidence),
    )


def _input(inp: InputReport, sampling: SamplingReport | None, colors: Mapping[str, str]) -> InputView:
    chart, legend = document_map(inp, sampling, colors)
    facts = [
        KeyValue("conflict detected", "yes" if inp.conflict.detected else "no"),
        KeyValue("conflict probability", f"{fixed(inp.conflict.score)} ({inp.conflict.state})"),
        KeyValue("documents", str(len(inp.documents))),
        KeyValue("centers made by", "the generator reading each document" if inp.tier == "read" else "the text alone"),
    ] + ([KeyValue("stance", "judged by the generator" if inp.stance == "assessed" else "not assessed")] if inp.stance else [])
    if inp.prompt_tokens or inp.context_window:
        facts.append(KeyValue("prompt tokens", f"{inp.prompt_tokens} / {inp.context_window or '?'}"))
    return InputView(
        facts=facts,
        document_map=chart,
        legend=legend,
        centers=[
            CenterRow(c.id, c.label, fixed(c.mass), list(c.documents), colors[c.id]) for c in inp.gravity_centers
        ],
        pairs=[PairRow(p.a, p.b, p.kind, p.evidence) for p in inp.conflict.pairs],
        noise=list(inp.noise_documents),
        documents=[
            DocumentRow(d.id, d.center or "noise", d.answer or "", d.claim or "",
                        "" if d.read_answer is None else d.read_answer
                        + ("" if d.yes_margin is None else f" (yes margin {d.yes_margin:+.2f})"),
                        " · ".join(m for m in (d.authority, d.date) if m))
            for d in inp.documents
        ],
        marked=any(d.authority or d.date for d in inp.documents),
        read=inp.tier == "read",
        instruction_conflicts=[" ⟷ ".join(pair) for pair in inp.instruction_conflicts],
    )


def _sampling(sampling: SamplingReport, inp: InputReport, colors: Mapping[str, str]) -> SamplingView:
    facts = [KeyValue("backend", sampling.backend), KeyValue("wall seconds", fixed(sampling.wall_seconds, 1))]
    rows = [[fixed(getattr(run, name)) for name in METRICS] for run in sampling.runs]
    runs = [_run(i, run, inp, colors) for i, run in enumerate(sampling.runs)]
    ablation = [
        [a.variant, str(len(a.documents)), fixed(a.temperature), fixed(a.mean_entropy),
         fixed(a.semantic_entropy), fixed(a.first_token_divergence)]
        for a in sampling.ablation
    ]
    prompt, source = sampling.shown_prompt()
    return SamplingView(facts=facts, metric_names=METRICS, metric_rows=rows, runs=runs,
                        mass_vs_pull=mass_vs_pull(inp, sampling, colors),
                        ablation_names=ABLATION_COLUMNS if ablation else (), ablation_rows=ablation,
                        prompt=prompt, prompt_source=source)



def _run(index: int, run: TemperatureRun, inp: InputReport, colors: Mapping[str, str]) -> RunView:
    labels = {c.id: c.label for c in inp.gravity_centers}
    return RunView(
        anchor=f"run-{index}",
        temperature=f"{run.temperature:g}",
        pull_chart=svg.grouped_bars(pull_groups(run, inp, colors), label="center mass vs pull"),
        first_token_chart=svg.horizontal_bars(_first_token_bars(run.first_tokens), label="first tokens"),
        entropy_chart=svg.entropy_line(run.entropy_by_position, [b.position for b in run.bifurcations]),
        bifurcations=[
            BifurcationRow(b.position, b.context, [visible(c) for c in b.candidates], fixed(b.margin))
            for b in run.bifurcations
        ],
        clusters=_clusters(run, labels, colors),
    )


def _first_token_bars(first_tokens: Mapping[str, int]) -> list[svg.Bar]:
    ranked = sorted(first_tokens.items(), key=lambda kv: (-kv[1], kv[0]))
    head, rest = ranked[:TOP_FIRST_TOKENS], ranked[TOP_FIRST_TOKENS:]
    bars = [svg.Bar(visible(tok), count, PALETTE[0], f"{visible(tok)}: {count}") for tok, count in head]
    if rest:
        other = sum(count for _, count in rest)
        bars.append(svg.Bar(f"({len(rest)} others)", other, GREY, f"{len(rest)} other tokens: {other}"))
    return bars


def _clusters(run: TemperatureRun, labels: Mapping[str, str], colors: Mapping[str, str]) -> list[ClusterGroup]:
    by_cluster: dict[int, list[SampleRow]] = {}
    for s in run.samples:
        center = f"{s.center}: {labels[s.center]}" if s.center in labels else s.center
        row = SampleRow(s.seed, s.finish_reason, center, colors.get(s.center, GREY), s.tokens, s.compliant, s.text)
        by_cluster.setdefault(s.cluster, []).append(row)
    return [ClusterGroup(k, by_cluster[k]) for k in sorted(by_cluster)]


def visible(token: str) -> str:
    """Show whitespace in a token so that ' Paris' and 'Paris' differ on the page."""
    if token == "":
        return "∅"
    return token.replace(" ", "␣").replace("\n", "⏎").replace("\t", "⇥")


__all__ = ["PageView", "build_page", "visible"]
