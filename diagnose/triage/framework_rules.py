"""Checklist stage 5, framework: the same parameters mean different samplers in different engines.

Facts from ``shared/reference/sampler-semantics.md`` (read from each project's source).
"""

from __future__ import annotations

from diagnose.case import GREEDY_EPSILON
from diagnose.triage.context import Flag, TriageContext


def sampler_portability(ctx: TriageContext) -> Flag | None:
    spec = ctx.case.sampling
    notes: dict[str, str] = {}
    warm = [t for t in spec.temperatures if t > GREEDY_EPSILON]
    # Top-k keeps the same tokens at any temperature (scaling is monotone): only top-p moves.
    if warm and spec.top_p < 1.0 and any(t != 1.0 for t in warm):
        notes["llama.cpp / Ollama"] = (
            "apply temperature last, after top-p (Hugging Face and vLLM apply it first), "
            "so top-p sees the untempered distribution and keeps a different candidate set"
        )
    if spec.top_k:
        notes["OpenAI"] = f"has no top_k: top_k={spec.top_k} is ignored there"
    if spec.repetition_penalty != 1.0:
        notes["OpenAI / llama.cpp"] = (
            "OpenAI has only frequency/presence penalties; llama.cpp penalises only the last "
            "64 tokens, while Hugging Face penalises every prompt and output token"
        )
    if any(t <= GREEDY_EPSILON for t in spec.temperatures):
        notes["Hugging Face"] = "temperature 0 with do_sample=True raises; use do_sample=False"
    served = ctx.environment.get("framework") or {}
    dropped = served.get("dropped_parameters") or {}
    hidden_min_p = _hidden_min_p(served)
    if served:
        notes[f"{served.get('framework')} (sampled here)"] = (
            f"sampler order: {' → '.join(served.get('order') or ['unknown'])}"
            + (f"; ignored parameters: {', '.join(sorted(dropped))}" if dropped else "")
            + (f"; min_p {hidden_min_p} is on by the server's default (the case sets none): "
               "the samples skip every token below that share of the top token's probability; "
               "diagnose run --min-p 0 switches it off, or set it to what you deploy with"
               if hidden_min_p else "")
        )
    if not notes:
        return None
    measured = {
        str(run.temperature): run.temperature_last_divergence for run in ctx.runs_by_temperature()
    }
    limit = ctx.thresholds.framework_divergence_warn
    material = any(share >= limit for share in measured.values())
    evidence = {
        "sampling": {"temperatures": spec.temperatures, "top_k": spec.top_k,
                     "top_p": spec.top_p, "repetition_penalty": spec.repetition_penalty},
        "measured_with": "Hugging Face order: penalty → temperature → top-k → top-p",
        "differences": notes,
    }
    if measured:
        evidence["temperature_last_divergence"] = measured
        evidence["threshold"] = limit
    if dropped:
        evidence["dropped_parameters"] = dropped
    if hidden_min_p:
        evidence["min_p"] = served.get("min_p")
    return Flag(
        "warn" if material or dropped or hidden_min_p else "info",
        evidence,
        "These settings do not mean the same sampler in every serving framework. Diagnose with "
        "the framework you deploy on (an OpenAI-compatible backend), or pin parameters that "
        "behave alike everywhere (top_k 0, top_p 0.9, repetition_penalty 1.0).",
    )


def _hidden_min_p(served: dict) -> float | None:
    """The min-p a server applies by its own default (not sent by the request), when it is on."""
    min_p = served.get("min_p") or {}
    value = min_p.get("value")
    return value if min_p.get("set_by") == "server default" and isinstance(value, (int, float)) and value > 0 else None
