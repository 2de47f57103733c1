"""Checklist stage 3, length: were answers cut off, or does the context overflow the window?"""

from __future__ import annotations

from diagnose.triage.context import Flag, TriageContext


def truncated(ctx: TriageContext) -> Flag | None:
    t = ctx.thresholds
    runs = [r for r in ctx.runs_by_temperature() if r.truncation_rate > t.truncation_warn]
    if not runs:
        return None
    worst = max(r.truncation_rate for r in runs)
    return Flag(
        "fail" if worst >= t.truncation_fail else "warn",
        {
            "truncation_rate": {str(r.temperature): round(r.truncation_rate, 3) for r in runs},
            "max_new_tokens": ctx.case.sampling.max_new_tokens,
            "thresholds": {"warn_above": t.truncation_warn, "fail_at": t.truncation_fail},
        },
        "Some answers were cut off at max_new_tokens (finish_reason 'length'), so they are "
        "incomplete and any format check on them is unreliable. Raise max_new_tokens or ask "
        "for a shorter answer in the prompt.",
    )


def context_window(ctx: TriageContext) -> Flag | None:
    window = ctx.inputs.context_window
    prompt = ctx.inputs.prompt_tokens
    if not window or not prompt:
        return None
    need = prompt + ctx.case.sampling.max_new_tokens
    share = need / window
    if share <= ctx.thresholds.context_near_share:
        return None
    return Flag(
        "fail" if need > window else "warn",
        {"prompt_tokens": prompt, "max_new_tokens": ctx.case.sampling.max_new_tokens,
         "context_window": window, "share": round(share, 3),
         "threshold": ctx.thresholds.context_near_share},
        "The prompt plus the answer budget does not fit (or barely fits) the model's context "
        "window: the start of the context or the end of the answer will be lost. Send fewer or "
        "shorter documents, or use a model with a longer window.",
    )
