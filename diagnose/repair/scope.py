"""A candidate's input report: the original analysis, restricted to the candidate's documents.

Re-running the input stage on every candidate would redo the embedding and the
read tier; removing or reordering documents does not change what each remaining
document says, so the original facts are kept and only what depends on the set and
order of documents is recomputed: centers lose their removed documents (and the
masses are renormalised; a center left empty disappears), noise and conflict pairs
keep the remaining documents, the conflict stays detected only while two or more
centers remain, and the strongest center's position, the prompt's token count, the
instruction conflicts and the delimiter check are measured on the candidate's prompt.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from diagnose.case import Case
from diagnose.inputs.instructions import instruction_conflicts
from diagnose.inputs.layout import center_position, delimiter_issue
from diagnose.prompt import flat_prompt
from diagnose.report import Conflict, GravityCenter, InputReport
from diagnose.triage.input_rules import lost_in_the_middle_at
from diagnose.triage.thresholds import TriageThresholds


def candidate_inputs(
    original: InputReport,
    case: Case,
    count_tokens: Callable[[str], int] | None,
    prompt_tokens: int,
    thresholds: TriageThresholds,
) -> InputReport:
    """The input report of ``case`` (a candidate) derived from the original case's report."""
    ids = [d.id for d in case.documents]
    keep = set(ids)
    views = {d.id: d for d in original.documents}
    weights = []
    for center in original.gravity_centers:
        docs = [d for d in center.documents if d in keep]
        if docs:
            weights.append((center, docs, center.mass * len(docs) / len(center.documents)))
    total = sum(w for _, _, w in weights) or 1.0
    centers = [GravityCenter(id=c.id, documents=docs, mass=round(w / total, 6), label=c.label)
               for c, docs, w in weights]
    conflict = original.conflict
    if len(centers) < 2:
        conflict = Conflict(detected=False, score=0.0, pairs=[], features={})
    else:
        conflict = msgspec.structs.replace(
            conflict, pairs=[p for p in conflict.pairs if p.a in keep and p.b in keep])
    prompt = flat_prompt(case)
    texts = [d.text for d in case.documents]
    position = None
    if centers:
        members = [ids.index(d) for d in centers[0].documents]
        position = center_position(prompt, texts, members, count_tokens)
    return msgspec.structs.replace(
        original,
        gravity_centers=centers,
        noise_documents=[d for d in original.noise_documents if d in keep],
        conflict=conflict,
        documents=[views[i] for i in ids if i in views],
        prompt_tokens=prompt_tokens,
        instruction_conflicts=instruction_conflicts(case.system, case.template),
        delimiter_issue=delimiter_issue(texts, case.template, prompt),
        strongest_center_position=position,
        lost_in_the_middle=lost_in_the_middle_at(position, prompt_tokens, thresholds),
    )
