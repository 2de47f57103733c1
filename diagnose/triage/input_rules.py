"""Checklist stage 1, the input: is the context self-consistent and well laid out?"""

from __future__ import annotations

from diagnose.inputs import layout
from diagnose.triage.context import Flag, TriageContext
from diagnose.triage.thresholds import TriageThresholds


def competing_centers(ctx: TriageContext) -> Flag | None:
    """A ``warn`` when the calibrated verdict says conflict (``state`` ``conflict``), an ``info``
    when it is ``unsure``: evidence the gate does not trust (contract section 7)."""
    conflict = ctx.inputs.conflict
    state = "conflict" if conflict.detected else conflict.state
    if state == "none":
        return None
    centers = ctx.inputs.gravity_centers
    return Flag(
        "warn" if state == "conflict" else "info",
        {
            "conflict_score": round(conflict.score, 3),
            "probability": round(conflict.probability, 3),
            "state": state,
            "thresholds": {"conflict_score": conflict.threshold},
            "centers": [
                {"id": c.id, "label": c.label, "mass": round(c.mass, 3), "documents": c.documents,
                 "standing": c.standing}
                for c in centers
            ],
            "pairs": [
                {"a": p.a, "b": p.b, "kind": p.kind, "evidence": p.evidence}
                for p in conflict.pairs[:5]
            ],
        },
        ("" if state == "conflict" else "Possibly (the calibrated verdict is unsure; check the quoted pairs): ") +
        "The retrieved documents disagree: they form competing gravity centers, so the "
        "model's answer depends on which one it happens to follow. " + _superseded_advice(centers) +
        "Fix the context, not the "
        "temperature: drop or correct the conflicting passage, disambiguate the entity in the "
        "question, or tell the model how to handle disagreement (e.g. 'if the documents "
        "disagree, say so and give both answers with their sources').",
    )


def _superseded_advice(centers) -> str:
    """Which documents are outdated, when the centers' standing says so (never the current ones)."""
    old = [d for c in centers if c.standing == "superseded" for d in c.documents]
    new = [d for c in centers if c.standing == "current" for d in c.documents]
    if not old or not new:
        return ""
    return (f"{', '.join(old)} {'is' if len(old) == 1 else 'are'} superseded by {', '.join(new)} (older or archived): "
            f"drop or update {'it' if len(old) == 1 else 'them'} first. ")


def reader_unavailable(ctx: TriageContext) -> Flag | None:
    """An ``info`` when no reader read the documents, naming what was therefore not assessed."""
    inputs = ctx.inputs
    if not inputs.not_assessed:
        return None
    why = inputs.reader_note or "the static reader was chosen"
    return Flag(
        "info",
        {"reader": inputs.reader.kind if inputs.reader else "static", "not_assessed": inputs.not_assessed,
         "reason": why},
        f"No model read the documents ({why}), so these checks were not assessed: "
        f"{', '.join(n.replace('_', ' ') for n in inputs.not_assessed)}. The centers come from the text "
        "alone. Install the reference reader (`make setup`) or choose one with --reader.",
    )


def reader_build(ctx: TriageContext) -> Flag | None:
    """An ``info`` when the reader's engine was built for other CPU features than the readings its
    conflict calibration was fitted on: a greedy reading can differ between builds."""
    reader = ctx.inputs.reader
    if reader is None or reader.calibrated is not False:
        return None
    return Flag(
        "info",
        {"reader": reader.name, "kernels": reader.kernels, "calibrated": False},
        f"The reader's llama.cpp was built for {reader.kernels}, not for the CPU features of the build "
        "whose readings the conflict calibration was fitted on. Another build sums in another order, so "
        "a few documents can read differently and the conflict probability's cut points may not hold. "
        "Rebuild the reader with `make reader` (the portable build), or refit the calibration on this "
        "build's readings (scripts/calibrate-conflict).",
    )


def noise_share(ctx: TriageContext) -> Flag | None:
    total = len(ctx.inputs.documents) or len(ctx.case.documents)
    noise = len(ctx.inputs.noise_documents)
    limit = ctx.thresholds.noise_share_warn
    if not total or noise / total < limit:
        return None
    return Flag(
        "warn",
        {"noise_documents": ctx.inputs.noise_documents, "share": round(noise / total, 3), "threshold": limit},
        "A large share of the retrieved passages is off-topic or unusable, which dilutes the "
        "context's pull. Tighten retrieval (a higher score cut-off, a reranker, fewer passages) "
        "or filter boilerplate and tables before they reach the prompt.",
    )


def contradictory_instructions(ctx: TriageContext) -> Flag | None:
    pairs = ctx.inputs.instruction_conflicts
    if not pairs:
        return None
    return Flag(
        "warn",
        {"pairs": pairs},
        "The system prompt or template gives instructions that contradict each other; the "
        "model will obey one or the other from sample to sample. Keep one instruction per "
        "concern and delete the other.",
    )


def unclear_delimiters(ctx: TriageContext) -> Flag | None:
    issue = getattr(ctx.inputs, "delimiter_issue", None)
    if not issue:
        return None
    return Flag(
        "warn",
        {"issue": issue},
        "The documents are not clearly separated from each other and from the instructions. "
        "Put each document under its own header (e.g. 'Document [1] (source: ...)') and keep "
        "the question outside the document block.",
    )


def lost_in_the_middle(ctx: TriageContext) -> Flag | None:
    position = getattr(ctx.inputs, "strongest_center_position", None)
    tokens = ctx.inputs.prompt_tokens
    t = ctx.thresholds
    if not lost_in_the_middle_at(position, tokens, t):
        return None
    return Flag(
        "info",
        {"strongest_center_position": round(position, 3), "prompt_tokens": tokens,
         "threshold_tokens": t.lost_in_middle_tokens, "middle": [t.lost_in_middle_start, t.lost_in_middle_end]},
        "The strongest evidence sits in the middle of a long context, where models attend "
        "least. Put the most relevant documents first or last.",
    )


def lost_in_the_middle_at(position: float | None, prompt_tokens: int, t: TriageThresholds) -> bool:
    """:func:`diagnose.inputs.layout.lost_in_the_middle` with the triage thresholds: what the
    finding fires on and the report's ``input.lost_in_the_middle`` says."""
    return layout.lost_in_the_middle(position, prompt_tokens, t.lost_in_middle_tokens, t.lost_in_middle_start,
                                     t.lost_in_middle_end)
