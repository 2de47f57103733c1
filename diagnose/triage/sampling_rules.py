"""Checklist stage 2, sampling: do the outputs drift (pull too weak) or lock up (too strong)?"""

from __future__ import annotations

import math
import re

from diagnose.report import TemperatureRun
from diagnose.triage.context import Flag, TriageContext


def normalized_first_token_divergence(divergence: float, n: int) -> float:
    """First-token divergence on a scale that does not depend on n.

    ``divergence`` is distinct first tokens / n (contract section 3: 1/n when all
    agree, 1 when all differ). Returns (distinct - 1) / (n - 1): 0 when all samples
    agree, 1 when all differ, for any n >= 2 (0.0 for n <= 1).
    """
    if n <= 1:
        return 0.0
    distinct = max(1, round(divergence * n))
    return min(1.0, (distinct - 1) / (n - 1))


def normalized_semantic_entropy(entropy: float, n: int) -> float:
    """Semantic entropy (nats) over its maximum ln n for n samples.

    0 when every sample means the same, 1 when all n differ, for any n >= 2
    (0.0 for n <= 1, where nothing can differ).
    """
    if n <= 1:
        return 0.0
    return min(1.0, max(0.0, entropy / math.log(n)))


def _agreement(run: TemperatureRun) -> dict[str, float | int]:
    """A run's raw and n-normalised agreement metrics, as rules report them."""
    return {
        "n": run.n,
        "semantic_entropy": round(run.semantic_entropy, 3),
        "semantic_entropy_max": round(math.log(run.n), 3) if run.n > 1 else 0.0,
        "semantic_entropy_normalized": round(normalized_semantic_entropy(run.semantic_entropy, run.n), 3),
        "first_token_divergence": round(run.first_token_divergence, 3),
        "distinct_first_tokens": max(1, round(run.first_token_divergence * run.n)),
        "first_token_divergence_normalized": round(
            normalized_first_token_divergence(run.first_token_divergence, run.n), 3),
    }


def weak_pull(ctx: TriageContext) -> Flag | None:
    """The coolest run's samples disagree, on scales normalised for its n.

    Raw semantic entropy can reach at most ln n (0.69 nats for 2 samples) and raw
    first-token divergence is at least 1/n (0.5 for 2 samples), so fixed raw
    thresholds fire always or never depending on the seed count. The rule compares
    semantic entropy / ln n and (distinct first tokens - 1) / (n - 1) instead: both 0
    when every sample agrees and 1 when all differ, whatever n is.

    Silent when the outputs loop (:func:`strong_pull` fires): looping samples differ in
    their loops, not in what the context lets them answer, and a pull too weak and one
    too strong call for opposite changes (focus the context / loosen sampling).
    """
    runs = ctx.runs_by_temperature()
    if not runs or _looping(ctx):
        return None
    coolest = runs[0]
    if coolest.n <= 1:
        return None
    t = ctx.thresholds
    semantic = normalized_semantic_entropy(coolest.semantic_entropy, coolest.n)
    divergence = normalized_first_token_divergence(coolest.first_token_divergence, coolest.n)
    drifting = (
        semantic >= t.weak_pull_semantic_entropy_normalized
        or divergence >= t.weak_pull_first_token_divergence_normalized
    )
    if not drifting:
        return None
    return Flag(
        "warn",
        {
            "temperature": coolest.temperature,
            **_agreement(coolest),
            "thresholds": {
                "semantic_entropy_normalized": t.weak_pull_semantic_entropy_normalized,
                "first_token_divergence_normalized": t.weak_pull_first_token_divergence_normalized,
            },
        },
        "Even at the lowest temperature the samples disagree in meaning: the context's pull "
        "is too weak to pin one answer. Turning the temperature down would only hide this. "
        "Add or focus context (the passage that answers the question), remove competing "
        "passages, and make the question specific.",
    )


def _looping(ctx: TriageContext) -> list[TemperatureRun]:
    """The runs whose samples repeat themselves (repetition rate at the strong-pull threshold)."""
    return [r for r in ctx.runs_by_temperature() if r.repetition_rate >= ctx.thresholds.strong_pull_repetition]


def strong_pull(ctx: TriageContext) -> Flag | None:
    """Samples loop. The advice suggests a mild repetition penalty only when the case has
    none yet (with one, :func:`repetition_penalty_high` may already say to lower it)."""
    looping = _looping(ctx)
    if not looping:
        return None
    limit = ctx.thresholds.strong_pull_repetition
    penalty = ("add a mild repetition penalty (1.05-1.15)" if ctx.case.sampling.repetition_penalty <= 1.0
               else "keep the repetition penalty mild (1.05-1.15): a higher one damages fluency")
    return Flag(
        "warn",
        {
            "repetition_rate": {str(r.temperature): round(r.repetition_rate, 3) for r in looping},
            "threshold": limit,
        },
        "The outputs repeat themselves: the pull is too strong (near-greedy decoding, a rigid "
        "format, or an over-constrained prompt). Loosen sampling: raise the temperature a "
        f"little, use top_p around 0.9, or {penalty}.",
    )


def split_center_pull(ctx: TriageContext) -> Flag | None:
    """Two centers each pull at least ``split_pull_share`` of a run's samples, and at
    least ``split_pull_min_samples`` samples each (with n <= 5 a single sample is
    already a 0.2 share: one stray sample is not a split)."""
    share = ctx.thresholds.split_pull_share
    least = ctx.thresholds.split_pull_min_samples
    for run in ctx.runs_by_temperature():
        pulled = {c: f for c, f in run.center_pull.items()
                  if c != "none" and f >= share and round(f * run.n) >= least}
        if len(pulled) >= 2:
            return Flag(
                "fail",
                {"temperature": run.temperature, "n": run.n, "center_pull": run.center_pull,
                 "samples": {c: round(f * run.n) for c, f in pulled.items()},
                 "threshold": share, "min_samples": least},
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
    """Reads the ablation runs (``run --ablation``): how much the context narrows the outputs.

    A weak pull is not claimed while the outputs loop (:func:`strong_pull` says the pull is
    too strong): then the finding is ``info`` and says why."""
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
    if narrowing < t.ablation_gap and full.semantic_entropy >= bare.semantic_entropy and _looping(ctx):
        return Flag(
            "info", evidence,
            "The documents barely narrow the outputs, but the outputs loop (sampling.strong_pull): "
            "these entropies compare loops, not the context's pull. Fix the loops first, then "
            "measure again.",
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


_STOPPED_CONSTRAINT = re.compile(r"constraints\[(\d+)\]")


def constraint_timeout(ctx: TriageContext) -> Flag | None:
    """A regex constraint was stopped at its time limit, so its compliance is unknown.

    The sampling stage lists such a constraint as ``constraints[i]`` (with
    ``compliance_rate``) in the ``unavailable`` of each run it could not judge
    (:class:`diagnose.sampling.constraints.ConstraintChecker`); there
    ``compliance_rate`` judges the other constraints only.
    """
    stopped: dict[int, list[float]] = {}
    for run in ctx.runs_by_temperature():
        for name in run.unavailable:
            if found := _STOPPED_CONSTRAINT.fullmatch(name):
                stopped.setdefault(int(found[1]), []).append(run.temperature)
    if not stopped:
        return None
    constraints = ctx.case.constraints
    t = ctx.sampling_settings
    return Flag(
        "warn",
        {
            "constraints": [
                {
                    "constraint": f"constraints[{index}]",
                    "pattern": getattr(constraints[index], "pattern", None) if index < len(constraints) else None,
                    "temperatures": temperatures,
                }
                for index, temperatures in sorted(stopped.items())
            ],
            "thresholds": {"regex_timeout_s": t.regex_timeout_s, "regex_budget_s": t.regex_budget_s},
        },
        "A regex constraint was stopped at its time limit: the pattern backtracks "
        "catastrophically on the sampled outputs, so whether they satisfy it is unknown. It "
        "was not run again, and compliance_rate judges the other constraints only in the "
        "temperatures listed. Simplify the pattern: avoid nested or overlapping quantifiers "
        "such as (a+)+, (.*)*, (\\w|\\d)+ or \\s*\\s*, anchor it, and bound repeats "
        "({0,40} rather than *).",
    )


def answers_elsewhere(ctx: TriageContext) -> Flag | None:
    """Samples that answer something else than the question: they state only values of
    another kind than the documents' answers, or list the documents instead of answering
    (``Sample.answer_kind == "other"``, :mod:`diagnose.sampling.sample_answers`). The advice
    quotes the case's question and the answers its centers give."""
    runs = [r for r in ctx.runs_by_temperature() if r.answer_kinds.get("other")]
    if not runs:
        return None
    examples = [s.text[:160] for r in runs for s in r.samples if s.answer_kind == "other"][:3]
    return Flag(
        "info",
        {"other": {str(r.temperature): r.answer_kinds["other"] for r in runs},
         "n": {str(r.temperature): r.n for r in runs}, "examples": examples},
        "Some samples answer something else than the question: another kind of value than the "
        "documents' answers, or a list of the documents. They count as their own meanings. "
        + _ask_for_the_answer(ctx),
    )


def _ask_for_the_answer(ctx: TriageContext) -> str:
    """How to ask this case's question for the answer itself, in the form its centers answer it."""
    question = " ".join(ctx.case.question.split())
    shown = question if len(question) <= 120 else question[:119] + "…"
    labels = [c.label for c in sorted(ctx.inputs.gravity_centers, key=lambda c: -c.mass)
              if c.label and len(c.label) <= 40][:3]
    if not labels:
        return f'Ask for the answer itself: follow "{shown}" with "Answer with the answer only, no list of the documents."'
    forms = " or ".join(f'"{label}"' for label in labels)
    thing = "value" if any(ch.isdigit() for label in labels for ch in label) else "name"
    return (f'Ask for the answer itself, in the form the documents give it ({forms}): follow "{shown}" with '
            f'"Answer with the {thing} only, like {labels[0]}."')
