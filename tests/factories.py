"""Test data with quiet defaults: cases, input reports, temperature runs, reports and triage
contexts. Each test states only what it is about; everything else is what no rule flags."""

from __future__ import annotations

from typing import Any

from diagnose.case import Case, Document, SamplingSpec
from diagnose.report import Conflict, Finding, GravityCenter, InputReport, Report, SamplingReport, TemperatureRun
from diagnose.triage.context import DeterminismCheck, TriageContext
from diagnose.triage.thresholds import TriageThresholds

QUIET_SAMPLING: dict[str, Any] = {"seeds": 8, "temperatures": [0.7], "top_p": 1.0, "top_k": 0,
                                  "repetition_penalty": 1.0, "max_new_tokens": 128}
"""Sampling settings that no settings-only rule flags: no top-k, no top-p, no penalty, no greedy."""


def make_case(n_docs: int = 3, **sampling: Any) -> Case:
    spec = SamplingSpec(**{**QUIET_SAMPLING, **sampling})
    docs = [Document(id=f"d{i}", text=f"text {i}") for i in range(n_docs)]
    return Case(id="t", question="Q?", documents=docs, sampling=spec)


def no_conflict() -> Conflict:
    return Conflict(detected=False, score=0.0)


def empty_inputs(**kw: Any) -> InputReport:
    """No centers, no noise, no conflict: the input stage found nothing."""
    return InputReport(**{"gravity_centers": [], "noise_documents": [], "conflict": no_conflict(), **kw})


def make_inputs(**kw: Any) -> InputReport:
    """One center over d0, d1 and d2 and no conflict, unless ``kw`` says otherwise."""
    centers = [GravityCenter(id="c1", documents=["d0", "d1", "d2"], mass=1.0, label="A")]
    return empty_inputs(**{"gravity_centers": centers, **kw})


def make_run(temperature: float = 0.7, **kw: Any) -> TemperatureRun:
    base: dict[str, Any] = {
        "temperature": temperature, "n": 8, "first_token_divergence": 1 / 8, "mean_entropy": 0.4,
        "perplexity": 2.0, "repetition_rate": 0.0, "semantic_entropy": 0.0,
        "compliance_rate": 1.0, "truncation_rate": 0.0, "center_pull": {"c1": 1.0}, "samples": [],
    }
    return TemperatureRun(**{**base, **kw})


def make_ctx(
    case: Case | None = None,
    inputs: InputReport | None = None,
    runs: list[TemperatureRun] | None = None,
    environment: dict[str, Any] | None = None,
    thresholds: TriageThresholds | None = None,
    determinism: DeterminismCheck | None = None,
    **kw: Any,
) -> TriageContext:
    """A triage context; ``runs`` None means no sampling stage ran."""
    return TriageContext(
        case=case or make_case(),
        inputs=inputs or make_inputs(),
        sampling=SamplingReport(runs=runs) if runs is not None else None,
        environment={"device": "cpu", "dtype": "float32"} if environment is None else environment,
        thresholds=thresholds or TriageThresholds(),
        determinism=determinism,
        **kw,
    )


def make_report(verdict: str = "ok", case_id: str = "t", *, inputs: InputReport | None = None,
                findings: list[Finding] | None = None, environment: dict[str, Any] | None = None,
                sampling: SamplingReport | None = None) -> Report:
    return Report(case_id=case_id, verdict=verdict,  # type: ignore[arg-type]
                  input=inputs or empty_inputs(), findings=findings or [], environment=environment or {},
                  sampling=sampling)
