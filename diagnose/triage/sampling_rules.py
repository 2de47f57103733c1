"""Checklist stage 2, sampling: do the outputs drift (pull too weak) or lock up (too strong)?"""

from __future__ import annotations

from diagnose.triage.context import Flag, TriageContext


def weak_pull(ctx: TriageContext) -> Flag | None:
    runs = ctx.runs_by_temperature()
    if not runs:
        return None
    coolest = runs[0]
    t = ctx.thresholds
    drifting = (
        coolest.n > 1
        and (
            coolest.semantic_entropy >= t.weak_pull_semantic_entropy
            or coolest.first_token_divergence >= t.weak_pull_first_token_divergence
        )
    )
    if not drifting:
        return None
    return Flag(
        "warn",
        {
            "temperature": coolest.temperature,
            "semantic_entropy": round(coolest.semantic_entropy, 3),
            "first_token_divergence": round(coolest.first_token_divergence, 3),
            "thresholds": {
                "semantic_entropy": t.weak_pull_semantic_entropy,
                "first_token_divergence": t.weak_pull_first_token_divergence,
            },
        },
        "Even at the lowest temperature the samples disagree in meaning: the context's pull "
        "is too weak to pin one answer. Turning the temperature down would only hide this. "
        "Add or focus context (the passage that answers the question), remove competing "
        "passages, and make the question specific.",
    )


def strong_pull(ctx: TriageContext) -> Flag | None:
    runs = ctx.runs_by_temperature()
    limit = ctx.thresholds.strong_pull_repetition
    looping = [r for r in runs if r.repetition_rate >= limit]
    if not looping:
        return None
    return Flag(
        "warn",
        {
            "repetition_rate": {str(r.temperature): round(r.repetition_rate, 3) for r in looping},
            "threshold": limit,
        },
        "The outputs repeat themselves: the pull is too strong (near-greedy decoding, a rigid "
        "format, or an over-constrained prompt). Loosen sampling: raise the temperature a "
        "little, use top_p around 0.9, or add a mild repetition penalty (1.05-1.15).",
    )


def split_center_pull(ctx: TriageContext) -> Flag | None:
    share = ctx.thresholds.split_pull_share
    for run in ctx.runs_by_temperature():
        pulled = {c: f for c, f in run.center_pull.items() if c != "none" and f >= share}
        if len(pulled) >= 2:
            return Flag(
                "fail",
                {"temperature": run.temperature, "center_pull": run.center_pull, "threshold": share},
                "The sampled answers follow different gravity centers from seed to seed: the "
                "conflict in the documents shows up in the outputs. Resolve the conflicting "
                "documents first; no sampling setting fixes this.",
            )
    return None


def determinism_trap(ctx: TriageContext) -> Flag | None:
    spec = ctx.case.sampling
    t = ctx.thresholds
    cold = [x for x in spec.temperatures if x < t.low_temperature]
    if not cold or spec.max_new_tokens < t.long_output_tokens:
        return None
    return Flag(
        "info",
        {"temperatures": cold, "max_new_tokens": spec.max_new_tokens,
         "thresholds": {"low_temperature": t.low_temperature, "long_output_tokens": t.long_output_tokens}},
        "Near-greedy decoding on long outputs tends to fall into loops and bland text. For "
        "long answers prefer a moderate temperature (0.5-0.8) with top_p 0.9.",
    )


def truncation_settings(ctx: TriageContext) -> Flag | None:
    spec = ctx.case.sampling
    t = ctx.thresholds
    problems = []
    if 0 < spec.top_k <= t.small_top_k and spec.top_p < 1.0:
        problems.append(f"top_k={spec.top_k} leaves top_p={spec.top_p} almost nothing to cut")
    if spec.top_p <= t.tiny_top_p:
        problems.append(f"top_p={spec.top_p} keeps only the top token or two: effectively greedy")
    if not problems:
        return None
    return Flag(
        "warn",
        {"top_k": spec.top_k, "top_p": spec.top_p, "problems": problems,
         "thresholds": {"small_top_k": t.small_top_k, "tiny_top_p": t.tiny_top_p}},
        "The truncation settings fight each other or make sampling greedy, so the temperature "
        "you set is not what you get. Use one truncation: top_p 0.9 with top_k 0 (off) or 50.",
    )


def repetition_penalty_high(ctx: TriageContext) -> Flag | None:
    penalty = ctx.case.sampling.repetition_penalty
    limit = ctx.thresholds.high_repetition_penalty
    if penalty < limit:
        return None
    return Flag(
        "warn",
        {"repetition_penalty": penalty, "threshold": limit},
        "A repetition penalty this high also punishes words the answer must repeat (names, "
        "numbers from the documents) and damages fluency. Keep it between 1.0 and 1.2.",
    )


def context_pull(ctx: TriageContext) -> Flag | None:
    """Reads the ablation runs (``run --ablation``): how much the context narrows the outputs."""
    runs = {a.variant: a for a in (ctx.sampling.ablation if ctx.sampling else [])}
    full, bare = runs.get("full_context"), runs.get("no_documents")
    if full is None or bare is None:
        return None
    t = ctx.thresholds
    dominant = runs.get("dominant_center")
    evidence = {
        a.variant: {"semantic_entropy": round(a.semantic_entropy, 3),
                    "mean_entropy": round(a.mean_entropy, 3), "documents": len(a.documents)}
        for a in runs.values()
    }
    evidence["temperature"] = full.temperature
    evidence["threshold"] = t.ablation_gap
    narrowing = bare.mean_entropy - full.mean_entropy
    if dominant is not None and full.semantic_entropy - dominant.semantic_entropy >= t.ablation_gap:
        return Flag(
            "warn", evidence,
            "With only the dominant center's documents the answers agree far more than with "
            "the full context: the other centers pull the outputs apart. Remove or reconcile "
            "the competing documents.",
        )
    if narrowing < t.ablation_gap and full.semantic_entropy >= bare.semantic_entropy:
        return Flag(
            "warn", evidence,
            "The documents barely narrow the output distribution compared with no documents "
            "at all: the context's pull is weak and the model answers from its own prior. "
            "Retrieve passages that state the answer directly, or say 'answer only from the "
            "documents'.",
        )
    return Flag(
        "info", evidence,
        "The context narrows the outputs as expected (see the entropies with and without "
        "documents).",
    )
