"""The control run: the same model, seeds and settings on the context reduced to one consistent center.

A sampling finding says the outputs wobble, loop, run long or split; whether the
*prompt* causes it is a comparison. The control is the case with its documents
reduced to the dominant gravity center (what the context says when it agrees with
itself), or, when the context already is one center and nothing else, to no
documents at all. It is sampled at every temperature with the same seeds, and
measured against the full case's centers (as the ablation is), so each metric
compares one to one; a control sample follows only a center whose documents the
control kept (one that states a removed center's answer follows "none") (:mod:`diagnose.triage.controlled` decides the findings).

The engine decodes one prompt per batch (one shared prefill), so the control is one
more batch of the same rows: it costs about what the main run's sampling costs.
"""

from __future__ import annotations

import time
from diagnose.analysis import InputAnalysis
from diagnose.case import Case
from diagnose.embedding import Embedder
from diagnose.prompt import build_messages
from diagnose.report import ControlRun
from diagnose.sampling.ablation import variants
from diagnose.decode.backend import Backend
from diagnose.sampling.constraints import ConstraintChecker
from diagnose.decode.engine import Trace, rows_for
from diagnose.sampling.settings import SamplingSettings
from diagnose.sampling.stage import measure_run, sample_traces

DESCRIPTIONS = {
    "dominant_center": "the dominant center's documents alone",
    "no_documents": "the question without documents",
}
"""How a report names each control."""


def control_case(case: Case, analysis: InputAnalysis) -> tuple[str, Case]:
    """``(variant, case)``: the dominant center alone when other documents exist (competing
    centers, noise), else the question without documents."""
    found = variants(case, analysis)
    name = "dominant_center" if "dominant_center" in found else "no_documents"
    return name, found[name]


def run_control(
    case: Case,
    backend: Backend,
    chat_ids,
    embedder: Embedder,
    analysis: InputAnalysis,
    seed_offset: int = 0,
    checker: ConstraintChecker | None = None,
    settings: SamplingSettings = SamplingSettings(),
) -> tuple[ControlRun, list[Trace]]:
    """Sample :func:`control_case` on the rows of the main run (same temperatures and seeds).

    ``chat_ids``: the prompt counter's ``chat_ids`` (messages -> token ids) for the case's
    model. Returns the control's report section and its traces (seed order per temperature)."""
    started = time.perf_counter()
    name, variant = control_case(case, analysis)
    rows = rows_for(case.sampling, seed_offset)
    traces = sample_traces(variant, backend, chat_ids(build_messages(variant)), rows)
    runs = [
        measure_run(case, backend, [tr for tr in traces if tr.row.temperature == t], embedder, analysis,
                    checker, settings, kept=[d.id for d in variant.documents])
        for t in case.sampling.temperatures
    ]
    kept = sorted(analysis.report.gravity_centers, key=lambda c: -c.mass)[0].id if name == "dominant_center" else None
    control = ControlRun(
        variant=name, description=DESCRIPTIONS[name], documents=[d.id for d in variant.documents], center=kept, runs=runs,
        wall_seconds=round(time.perf_counter() - started, 3),
    )
    return control, traces
