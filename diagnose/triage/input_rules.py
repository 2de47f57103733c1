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
                {"id": c.id, "label": c.label, "mass": round(c.mass, 3), "documents": c.documents}
                for c in centers
            ],
            "pairs": [
                {"a": p.a, "b": p.b, "kind": p.kind, "evidence": p.evidence}
                for p in conflict.pairs[:5]
            ],
        },
        ("" if state == "conflict" else "Possibly (the calibrated verdict is unsure; check the quoted pairs): ") +
        "The retrieved documents disagree: they form competing gravity centers, so the "
        "model's answer depends on which one it happens to follow. Fix the context, not the "
        "temperature: drop or correct the conflicting passage, disambiguate the entity in the "
        "question, or tell the model how to handle disagreement (e.g. 'if the documents "
        "disagree, say so and give both answers with their sources').",
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
