"""The framework rule turns into a warning when the measured order divergence is material."""

from __future__ import annotations

from diagnose.case import Case, SamplingSpec
from diagnose.report import SamplingReport, TemperatureRun
from diagnose.triage import TriageContext, TriageThresholds
from diagnose.triage.framework_rules import sampler_portability
from tests.factories import empty_inputs


def _run(temperature: float, divergence: float) -> TemperatureRun:
    return TemperatureRun(
        temperature=temperature, n=2, first_token_divergence=0.5, mean_entropy=0.1, perplexity=1.2,
        repetition_rate=0.0, semantic_entropy=0.0, compliance_rate=1.0, truncation_rate=0.0,
        center_pull={"none": 1.0}, samples=[], temperature_last_divergence=divergence,
    )


def _context(divergences: dict[float, float]) -> TriageContext:
    case = Case(id="c", question="q?", sampling=SamplingSpec(temperatures=list(divergences), top_k=0, top_p=0.9))
    runs = [_run(t, d) for t, d in divergences.items()]
    return TriageContext(
        case=case,
        inputs=empty_inputs(),
        sampling=SamplingReport(runs=runs),
        environment={},
        thresholds=TriageThresholds(),
    )


def test_material_divergence_warns_with_the_measured_shares():
    limit = TriageThresholds().framework_divergence_warn
    flag = sampler_portability(_context({0.2: limit, 1.2: 0.0}))
    assert flag is not None and flag.severity == "warn"
    assert flag.evidence["temperature_last_divergence"] == {"0.2": limit, "1.2": 0.0}
    assert flag.evidence["threshold"] == limit


def test_small_divergence_stays_informational():
    limit = TriageThresholds().framework_divergence_warn
    flag = sampler_portability(_context({0.2: limit / 2, 1.2: 0.0}))
    assert flag is not None and flag.severity == "info"


def test_parameters_a_served_framework_ignores_make_it_a_warning():
    context = _context({0.7: 0.0})
    served = {"framework": "ollama", "order": ["top_k", "temperature", "top_p"],
              "dropped_parameters": {"top_k": 50}}
    flagged = sampler_portability(TriageContext(
        case=context.case, inputs=context.inputs, sampling=context.sampling,
        environment={"framework": served}, thresholds=context.thresholds,
    ))
    assert flagged.severity == "warn"
    assert flagged.evidence["dropped_parameters"] == {"top_k": 50}
    assert "top_k → temperature → top_p" in flagged.evidence["differences"]["ollama (sampled here)"]


def test_a_min_p_on_by_the_servers_default_is_a_warning_and_one_sent_is_not():
    context = _context({0.7: 0.0})

    def flag(min_p: dict):
        served = {"framework": "llamacpp", "order": ["top_k", "min_p", "temperature"], "min_p": min_p}
        return sampler_portability(TriageContext(
            case=context.case, inputs=context.inputs, sampling=context.sampling,
            environment={"framework": served}, thresholds=context.thresholds,
        ))

    hidden = flag({"value": 0.05, "set_by": "server default"})
    assert hidden.severity == "warn" and hidden.evidence["min_p"]["value"] == 0.05
    assert "--min-p 0" in hidden.evidence["differences"]["llamacpp (sampled here)"]
    assert flag({"value": 0.05, "set_by": "request"}).severity == "info"
    assert flag({"value": None, "set_by": "server default"}).severity == "info"
