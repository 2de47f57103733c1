"""A candidate's input report, restricted from the original's."""

from __future__ import annotations

import msgspec
import pytest

from diagnose.case import Case, Document
from diagnose.report import Conflict, ConflictPair, DocumentView, GravityCenter, InputReport
from diagnose.repair.scope import candidate_inputs
from diagnose.triage.thresholds import TriageThresholds

LONG_AT_100 = TriageThresholds(lost_in_middle_tokens=100)
"""Prompts of 100 tokens or more count as long here."""


def _original() -> tuple[Case, InputReport]:
    case = Case(id="c", question="When?", documents=[Document(id=f"d{i}", text=f"w{i} " * 40) for i in range(1, 5)])
    report = InputReport(
        gravity_centers=[GravityCenter(id="c1", documents=["d2", "d3"], mass=0.667, label="a"),
                         GravityCenter(id="c2", documents=["d1"], mass=0.333, label="b")],
        noise_documents=["d4"],
        conflict=Conflict(detected=True, score=0.9, pairs=[ConflictPair(a="d1", b="d2", kind="value_mismatch",
                                                                         evidence="...")]),
        documents=[DocumentView(id=f"d{i}", center=None, relevance=0.5, tokens=40, position=[0.0, 0.0])
                   for i in range(1, 5)],
        prompt_tokens=170,
    )
    return case, report


def _words(text: str) -> int:
    return len(text.split())


def test_removing_a_camp_leaves_no_conflict_and_renormalises_the_mass():
    case, report = _original()
    kept = msgspec.structs.replace(case, documents=[d for d in case.documents if d.id != "d1"])
    derived = candidate_inputs(report, kept, _words, 130, LONG_AT_100)
    assert [(c.id, c.documents, c.mass) for c in derived.gravity_centers] == [("c1", ["d2", "d3"], 1.0)]
    assert derived.conflict.detected is False and derived.conflict.pairs == []
    assert derived.noise_documents == ["d4"] and [d.id for d in derived.documents] == ["d2", "d3", "d4"]
    assert derived.prompt_tokens == 130
    assert report.conflict.detected  # the original is untouched


def test_dropping_noise_keeps_the_conflict_and_moving_the_center_moves_its_position():
    case, report = _original()
    no_noise = msgspec.structs.replace(case, documents=case.documents[:3])
    derived = candidate_inputs(report, no_noise, _words, 130, LONG_AT_100)
    assert derived.noise_documents == [] and derived.conflict.detected and len(derived.conflict.pairs) == 1
    middle = candidate_inputs(report, case, _words, 170, LONG_AT_100)
    assert middle.strongest_center_position == pytest.approx(0.47, abs=0.05) and middle.lost_in_the_middle
    order = {d.id: d for d in case.documents}
    at_end = msgspec.structs.replace(case, documents=[order[i] for i in ("d1", "d4", "d2", "d3")])
    moved = candidate_inputs(report, at_end, _words, 170, LONG_AT_100)
    assert moved.strongest_center_position > 0.75 and not moved.lost_in_the_middle
