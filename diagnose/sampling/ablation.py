"""Context ablation: how much does the context narrow the output distribution?

The same question is sampled (at one temperature, same seeds) with the documents
removed and with only the dominant gravity center's documents kept. Comparing
those runs with the full context measures the context's pull: a context that
barely narrows the outputs relative to no documents is a weak pull; a dominant
center alone that is much narrower than the full context shows the other
centers pulling the outputs apart.
"""

from __future__ import annotations

import msgspec

from diagnose.analysis import InputAnalysis
from diagnose.case import Case
from diagnose.embedding import Embedder
from diagnose.prompt import build_messages
from diagnose.report import AblationRun, TemperatureRun
from diagnose.decode.backend import Backend
from diagnose.decode.engine import Row, decode_rows
from diagnose.decode.processors import GREEDY_EPSILON
from diagnose.sampling.settings import SamplingSettings
from diagnose.sampling.stage import measure_run


def variants(case: Case, analysis: InputAnalysis) -> dict[str, Case]:
    """The ablated cases: no documents, and the dominant center only (when others exist)."""
    out = {"no_documents": msgspec.structs.replace(case, documents=[])}
    centers = sorted(analysis.report.gravity_centers, key=lambda c: -c.mass)
    if centers:
        keep = set(centers[0].documents)
        kept = [d for d in case.documents if d.id in keep]
        if 0 < len(kept) < len(case.documents):
            out["dominant_center"] = msgspec.structs.replace(case, documents=kept)
    return out


def pick_temperature(runs: list[TemperatureRun]) -> float:
    """The median sampled temperature: warm enough to show spread, not the hottest."""
    warm = sorted(r.temperature for r in runs if r.temperature > GREEDY_EPSILON) or [runs[0].temperature]
    return warm[len(warm) // 2]


def run_ablation(
    case: Case,
    backend: Backend,
    embedder: Embedder,
    analysis: InputAnalysis,
    full_runs: list[TemperatureRun],
    settings: SamplingSettings = SamplingSettings(),
) -> list[AblationRun]:
    """The full context's run at :func:`pick_temperature` beside each of :func:`variants`,
    sampled with the same seeds and measured with the same ``settings`` (``Settings.sampling``)."""
    temperature = pick_temperature(full_runs)
    full = next(r for r in full_runs if r.temperature == temperature)
    results = [_summary("full_context", [d.id for d in case.documents], full)]
    rows = [Row(temperature, seed) for seed in range(case.sampling.seeds)]
    for name, variant in variants(case, analysis).items():
        prompt_ids = backend.chat_ids(build_messages(variant))
        traces = decode_rows(backend, prompt_ids, rows, case.sampling)
        # Measured against the full case's centers, so center_pull stays comparable; a sample
        # follows only a center whose documents the variant kept.
        run = measure_run(case, backend, traces, embedder, analysis, settings=settings,
                          kept=[d.id for d in variant.documents])
        results.append(_summary(name, [d.id for d in variant.documents], run))
    return results


def _summary(name: str, documents: list[str], run: TemperatureRun) -> AblationRun:
    return AblationRun(
        variant=name,
        documents=documents,
        temperature=run.temperature,
        mean_entropy=run.mean_entropy,
        semantic_entropy=run.semantic_entropy,
        first_token_divergence=run.first_token_divergence,
        center_pull=run.center_pull,
    )
