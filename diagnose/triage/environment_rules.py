"""Checklist stage 4, environment: is the run reproducible, and on what was it measured?"""

from __future__ import annotations

from diagnose.environment import SUMMATION_ORDER_NOTE, fingerprint_diff, only_summation_order
from diagnose.triage.context import Flag, TriageContext


def nondeterministic(ctx: TriageContext) -> Flag | None:
    check = ctx.determinism
    if check is None or check.first_mismatch is None:
        return None
    return Flag(
        "fail",
        {"temperature": check.temperature, "seed": check.seed,
         "first_mismatch_position": check.first_mismatch,
         "batch_tokens": check.batch_tokens, "alone_tokens": check.alone_tokens,
         "device": ctx.environment.get("device"), "dtype": ctx.environment.get("dtype")},
        "The same seed gave different tokens alone and inside a batch, so differences between "
        "runs are partly numerical noise of this environment (batch-dependent kernels, "
        "reduced precision). Compare runs on the same hardware, dtype and batch size, or use "
        "float32 on the device you diagnose.",
    )


def quantized_model(ctx: TriageContext) -> Flag | None:
    quantization = ctx.environment.get("quantization")
    if not quantization:
        return None
    return Flag(
        "info",
        {"model_id": ctx.environment.get("model_id"), "quantization": quantization,
         "dtype": ctx.environment.get("dtype")},
        "This diagnosis ran on a quantized model. Quantization shifts near-tied token "
        "probabilities, so wobble measured here can differ from the model you serve; "
        "re-run on the production weights before acting on small differences.",
    )


def fingerprint_changed(ctx: TriageContext) -> Flag | None:
    """The environment differs from the baseline's: ``warn``, or ``info`` when only the thread
    count differs (:data:`~diagnose.environment.SUMMATION_ORDER_KEYS`)."""
    baseline = ctx.baseline_environment
    if not baseline:
        return None
    diff = fingerprint_diff(baseline, ctx.environment)
    if not diff:
        return None
    changes = {key: {"baseline": before, "now": now} for key, (before, now) in diff.items()}
    if only_summation_order(diff):
        return Flag(
            "info",
            {"changes": changes},
            f"Only the thread count differs from the baseline's. {SUMMATION_ORDER_NOTE} Expect at most "
            "small differences between the runs from it; it is no reason to distrust the comparison.",
        )
    return Flag(
        "warn",
        {"changes": changes},
        "This run's environment differs from the baseline's (listed in the evidence). A "
        "changed model hash, quantization, dtype, device or library version shifts token "
        "probabilities on its own: attribute differences between the runs to it before "
        "blaming the prompt.",
    )
