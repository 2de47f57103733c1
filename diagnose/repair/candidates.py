"""Candidate repairs: one change to the case per candidate, drawn from the findings.

Each candidate is a new :class:`~diagnose.case.Case` made with
``msgspec.structs.replace`` from the original, and names the findings it answers,
the rules whose firing decides whether it resolved them, and the metrics that
judge it (targets: the wobble the finding is about; guards: what must not get
worse). The kinds, by the rule that proposes them:

=================================  =====================================================
rule                               candidates
=================================  =====================================================
input.competing_centers,           ``remove_center`` (one per minority center),
sampling.split_center_pull         ``keep_center`` (the dominant center's documents only),
                                   ``disagreement_instruction`` (added to the system prompt,
                                   in the question's language)
input.lost_in_the_middle           ``move_center`` to the ``start`` and to the ``end``
sampling.strong_pull,              ``temperature`` (near-greedy temperatures to 0.7,
sampling.determinism_trap          looping ones +0.3), and for loops ``top_p`` (0.9
                                   instead of a lower temperature) and
                                   ``repetition_penalty`` (1.1)
length.truncated                   ``max_new_tokens`` (doubled, at most 4096)
input.noise_share                  ``drop_noise`` (the noise documents removed)
framework.sampler_portability      ``pin_parameters`` (top_k 0, repetition_penalty 1.0)
=================================  =====================================================

Documents may carry ``authority`` and ``date`` (``repair.standing``). When those marks
put one center above the others, it is the center kept, and a candidate that removes
it or keeps another center alone carries ``drops_authoritative`` in its change.
Candidates come out in the order they are tried: those that drop the authoritative
side last, then by the severity of the finding they answer (fail, warn, info), then
by the finding's place in the checklist.
Two candidates that make the same case are one (the first kept).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from diagnose.case import MAX_NEW_TOKENS, MAX_TEMPERATURE, Case
from diagnose.errors import CaseError
from diagnose.report import SEVERITY_RANK, Finding, GravityCenter, InputReport, SamplingReport
from diagnose.repair.language import disagreement_instruction, question_language
from diagnose.repair.standing import drop_note, preferred_center
from diagnose.triage.thresholds import TriageThresholds

CENTER_RULES = ("input.competing_centers", "sampling.split_center_pull")
MODERATE_TEMPERATURE = 0.7
"""Where a near-greedy temperature is raised to (the determinism-trap advice: 0.5-0.8)."""
LOOP_TEMPERATURE_STEP = 0.3
"""How much a looping run's temperature is raised ("a little")."""
LOOP_TOP_P = 0.9
LOOP_REPETITION_PENALTY = 1.1
"""The mild penalty the strong-pull advice names (1.05-1.15)."""
SPREAD_GUARD = ("semantic_entropy",)
"""Sampling-parameter changes must not make the answers wobble more."""


@dataclass(frozen=True)
class Candidate:
    id: str
    change: dict[str, Any]
    """``kind`` and what it changes (the report's ``change``)."""
    case: Case
    answers: tuple[str, ...]
    """Rule ids of the fired findings this change answers."""
    rechecked: tuple[str, ...]
    """Rules re-run on the candidate: it resolved its findings when none of them fires.
    Empty when the change cannot resolve them by construction (an instruction leaves the
    documents' conflict in place), so it can help but never fix."""
    targets: tuple[str, ...]
    guards: tuple[str, ...] = ()
    severity: str = "info"
    rank: int = 0
    """Position of its first answered finding in the checklist."""
    removes_documents: bool = False
    temperature_map: dict[float, float] = field(default_factory=dict)
    """Original temperature -> the candidate's, for a ``temperature`` change (else identity)."""

    @property
    def drops_authoritative(self) -> bool:
        """It removes the center the case's authority and date marks put first (tried last)."""
        return "drops_authoritative" in self.change

    @property
    def metrics(self) -> tuple[str, ...]:
        return self.targets + tuple(m for m in self.guards if m not in self.targets)

    def sampled_temperatures(self, original: Sequence[float]) -> list[float]:
        """Temperatures to sample: all of the candidate's, except (for a ``temperature``
        change, whose prompt and other settings are the original's) those already sampled,
        whose samples are the original's exactly (a row's text depends on its seed,
        temperature and prompt alone)."""
        temps = self.case.sampling.temperatures
        if self.change["kind"] == "temperature":
            return [t for t in temps if t not in original]
        return list(temps)

    def compared_temperatures(self, original: Sequence[float]) -> list[tuple[float, float]]:
        """(original temperature, candidate temperature) pairs the verdict compares."""
        if self.change["kind"] == "temperature":
            return [(t, self.temperature_map[t]) for t in original if self.temperature_map.get(t, t) != t]
        return [(t, t) for t in original]


def propose(
    case: Case,
    inputs: InputReport,
    sampling: SamplingReport | None,
    findings: Sequence[Finding],
    thresholds: TriageThresholds,
) -> list[Candidate]:
    """Every candidate the fired findings call for, in the order they are tried."""
    fired = {f.rule: (i, f) for i, f in reversed(list(enumerate(findings)))}
    guards = ("compliance_rate",) if case.constraints else ()
    out: list[Candidate] = []

    def add(cid: str, change: dict[str, Any], answers: Sequence[str], rechecked: Sequence[str],
            targets: Sequence[str], extra_guards: Sequence[str] = (), temperature_map=None, **updates) -> None:
        answered = [r for r in answers if r in fired]
        if not answered:
            return
        try:
            candidate_case = _replace(case, **updates)
        except CaseError:  # a change the case format refuses is no candidate
            return
        out.append(Candidate(
            id=cid, change=change, case=candidate_case, answers=tuple(answered),
            rechecked=tuple(r for r in rechecked if r in fired), targets=tuple(targets),
            guards=tuple(extra_guards) + guards,
            severity=max((fired[r][1].severity for r in answered), key=SEVERITY_RANK.__getitem__),
            rank=min(fired[r][0] for r in answered),
            removes_documents=change["kind"] in ("remove_center", "keep_center", "drop_noise"),
            temperature_map=dict(temperature_map or {}),
        ))

    if any(r in fired for r in CENTER_RULES):
        _center_candidates(case, inputs, sampling, add)
    if "input.lost_in_the_middle" in fired and inputs.gravity_centers:
        strongest = set(inputs.gravity_centers[0].documents)
        front = [d for d in case.documents if d.id in strongest]
        rest = [d for d in case.documents if d.id not in strongest]
        for where, docs in (("start", front + rest), ("end", rest + front)):
            if [d.id for d in docs] != [d.id for d in case.documents]:
                add(f"move_center:{where}", {"kind": "move_center", "center": inputs.gravity_centers[0].id,
                                             "to": where, "documents": [d.id for d in front]},
                    ["input.lost_in_the_middle"], ["input.lost_in_the_middle"],
                    ["semantic_entropy", "center_split"], documents=docs)
    _sampling_candidates(case, fired, thresholds, add)
    spec = case.sampling
    if spec.max_new_tokens < MAX_NEW_TOKENS:
        budget = min(MAX_NEW_TOKENS, spec.max_new_tokens * 2)
        add("max_new_tokens", {"kind": "max_new_tokens", "from": spec.max_new_tokens, "to": budget},
            ["length.truncated"], ["length.truncated"], ["truncation_rate"],
            sampling=msgspec.structs.replace(spec, max_new_tokens=budget))
    noise = set(inputs.noise_documents)
    if noise and len(noise) < len(case.documents):
        add("drop_noise", {"kind": "drop_noise", "removed": [d.id for d in case.documents if d.id in noise]},
            ["input.noise_share"], ["input.noise_share"], ["semantic_entropy"],
            documents=[d for d in case.documents if d.id not in noise])
    pinned = {k: v for k, v in (("top_k", 0), ("repetition_penalty", 1.0)) if getattr(spec, k) != v}
    if pinned:
        add("pin_parameters", {"kind": "pin_parameters", "from": {k: getattr(spec, k) for k in pinned},
                               "to": pinned},
            ["framework.sampler_portability"], ["framework.sampler_portability"],
            ["temperature_last_divergence"], SPREAD_GUARD, sampling=msgspec.structs.replace(spec, **pinned))
    return _ordered(_unique(out))


def dominant_center(inputs: InputReport, sampling: SamplingReport | None) -> GravityCenter | None:
    """The center with the most mass; ties go to the one more samples followed, then the first."""
    centers = inputs.gravity_centers
    if not centers:
        return None
    pulled = {c.id: 0.0 for c in centers}
    for run in sampling.runs if sampling else []:
        for cid, share in run.center_pull.items():
            if cid in pulled:
                pulled[cid] += share * run.n
    return max(enumerate(centers), key=lambda ic: (round(ic[1].mass, 9), pulled[ic[1].id], -ic[0]))[1]


def _center_candidates(case: Case, inputs: InputReport, sampling: SamplingReport | None, add) -> None:
    dominant = dominant_center(inputs, sampling)
    preferred = preferred_center(inputs.gravity_centers, case.documents)
    anchor = preferred or dominant
    if anchor is not None and len(inputs.gravity_centers) >= 2:
        def drops(center: GravityCenter) -> dict[str, Any]:
            """The authoritative side a change loses, said in its ``change`` (empty: none)."""
            return {"drops_authoritative": drop_note(preferred, case.documents)} if preferred is not None \
                and center.id == preferred.id else {}

        for center in inputs.gravity_centers:
            if center.id == anchor.id and preferred is None:
                continue  # no marks: the samples' dominant center is the one kept
            gone = set(center.documents)
            kept = [d for d in case.documents if d.id not in gone]
            if kept:
                add(f"remove_center:{center.id}", {"kind": "remove_center", "center": center.id,
                                                   "label": center.label, "removed": sorted(gone), **drops(center)},
                    CENTER_RULES, CENTER_RULES, ["center_split", "semantic_entropy"], documents=kept)
        for keep_center in [anchor] + ([dominant] if dominant is not None and dominant.id != anchor.id else []):
            keep = set(keep_center.documents)
            lost = drops(preferred) if keep_center.id != anchor.id else {}
            add(f"keep_center:{keep_center.id}", {
                "kind": "keep_center", "center": keep_center.id, "label": keep_center.label,
                "removed": [d.id for d in case.documents if d.id not in keep], **lost},
                CENTER_RULES, CENTER_RULES, ["center_split", "semantic_entropy"],
                documents=[d for d in case.documents if d.id in keep])
    sentence = disagreement_instruction(case.question)
    if sentence not in (case.system or ""):
        system = f"{case.system.rstrip()} {sentence}" if case.system and case.system.strip() else sentence
        add("disagreement_instruction", {"kind": "disagreement_instruction", "language": question_language(case.question),
                                         "added": sentence},
            CENTER_RULES, ("sampling.split_center_pull",), ["center_split", "semantic_entropy"], system=system)


def _sampling_candidates(case: Case, fired: dict, thresholds: TriageThresholds, add) -> None:
    spec = case.sampling
    looping: set[float] = set()
    if "sampling.strong_pull" in fired:
        looping = {float(t) for t in fired["sampling.strong_pull"][1].evidence.get("repetition_rate", {})}
    moved: dict[float, float] = {}
    for t in spec.temperatures:
        if "sampling.determinism_trap" in fired and t < thresholds.low_temperature:
            moved[t] = max(t, MODERATE_TEMPERATURE)
        elif any(abs(t - x) < 1e-9 for x in looping):
            moved[t] = min(MAX_TEMPERATURE, round(t + LOOP_TEMPERATURE_STEP, 6))
    moved = {t: new for t, new in moved.items() if new != t}
    if moved:
        temps = list(dict.fromkeys(moved.get(t, t) for t in spec.temperatures))
        add("temperature", {"kind": "temperature", "from": list(spec.temperatures), "to": temps,
                            "moved": {f"{t:g}": new for t, new in moved.items()}},
            ["sampling.determinism_trap", "sampling.strong_pull"],
            ["sampling.determinism_trap", "sampling.strong_pull"], ["repetition_rate"], SPREAD_GUARD,
            temperature_map=moved, sampling=msgspec.structs.replace(spec, temperatures=temps))
    if spec.top_p > LOOP_TOP_P:
        add("top_p", {"kind": "top_p", "from": spec.top_p, "to": LOOP_TOP_P,
                      "why": "lower top_p instead of the temperature"},
            ["sampling.strong_pull"], ["sampling.strong_pull"], ["repetition_rate"], SPREAD_GUARD,
            sampling=msgspec.structs.replace(spec, top_p=LOOP_TOP_P))
    if spec.repetition_penalty == 1.0:
        add("repetition_penalty", {"kind": "repetition_penalty", "from": 1.0, "to": LOOP_REPETITION_PENALTY},
            ["sampling.strong_pull"], ["sampling.strong_pull"], ["repetition_rate"], SPREAD_GUARD,
            sampling=msgspec.structs.replace(spec, repetition_penalty=LOOP_REPETITION_PENALTY))


def _replace(case: Case, **updates) -> Case:
    return msgspec.structs.replace(case, **updates) if updates else case


def _unique(candidates: list[Candidate]) -> list[Candidate]:
    seen: set[bytes] = set()
    out = []
    for candidate in candidates:
        key = msgspec.json.encode(candidate.case)
        if key not in seen:
            seen.add(key)
            out.append(candidate)
    return out


def _ordered(candidates: list[Candidate]) -> list[Candidate]:
    """Candidates that drop the case's authoritative side last; then most severe first, then by
    checklist place; ties keep their order (a stable sort)."""
    return sorted(candidates, key=lambda c: (c.drops_authoritative, -SEVERITY_RANK[c.severity], c.rank))
