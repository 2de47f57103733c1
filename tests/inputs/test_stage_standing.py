"""The input stage marks which center is current, from fields or from the documents' own text."""

from __future__ import annotations

import datetime

import pytest

from diagnose.case import Case, Document
from diagnose.inputs import analyze_inputs
from diagnose.inputs.settings import InputSettings

pytestmark = pytest.mark.models

QUESTION = "What is the nightly hotel allowance for staff travelling to Lisbon?"
CURRENT = ("Travel policy, version 4, effective 1 March 2026. The nightly hotel allowance for Lisbon "
           "is EUR 180.")
OLD = ("ARCHIVED - superseded by version 4. Travel policy, version 3, effective 10 January 2023. "
       "The nightly hotel allowance for Lisbon is EUR 150.")
AGREES = "For Lisbon, staff may claim up to EUR 180 a night for a hotel."


def _report(embedder, *documents: Document):
    case = Case(id="made-up-policy", question=QUESTION, documents=list(documents))
    return analyze_inputs(case, embedder, InputSettings()).report


def _standing(report) -> dict[str, str | None]:
    return {d: c.standing for c in report.gravity_centers for d in c.documents}


def test_a_superseded_policy_stated_only_in_its_text_is_the_superseded_center(real_embedder):
    report = _report(real_embedder, Document(id="d0", text=CURRENT), Document(id="d1", text=OLD),
                     Document(id="d2", text=AGREES))
    assert _standing(report) == {"d0": "current", "d2": "current", "d1": "superseded"}
    assert report.conflict.state != "none"
    assert [p.kind for p in report.conflict.pairs] == ["outdated"]
    view = {v.id: v for v in report.documents}
    assert view["d1"].authority == "archived" and view["d0"].date == "2026-03-01" and view["d0"].date_source == "text"


def test_the_documents_own_fields_decide_before_their_text(real_embedder):
    report = _report(real_embedder,
                     Document(id="d0", text="The nightly hotel allowance for Lisbon is EUR 180.",
                              date=datetime.date(2026, 3, 1), authority="authoritative"),
                     Document(id="d1", text="The nightly hotel allowance for Lisbon is EUR 150.",
                              date=datetime.date(2023, 1, 10)))
    assert _standing(report) == {"d0": "current", "d1": "superseded"}
    assert {v.id: v.date_source for v in report.documents} == {"d0": "field", "d1": "field"}


def test_agreeing_documents_have_no_standing(real_embedder):
    report = _report(real_embedder, Document(id="d0", text=CURRENT), Document(id="d1", text=AGREES))
    assert _standing(report) == {"d0": None, "d1": None}


def test_a_superseded_center_is_a_conflict_at_any_score(real_embedder):
    from dataclasses import replace

    from diagnose.inputs.calibration import ConflictCalibration

    settings = InputSettings()
    sure = ConflictCalibration(weights=(("bias", 0.0),), conflict_at=0.99, unsure_at=0.9)  # p = 0.5 everywhere
    case = Case(id="made-up-policy", question=QUESTION,
                documents=[Document(id="d0", text=CURRENT), Document(id="d1", text=OLD)])
    report = analyze_inputs(case, real_embedder, replace(settings, conflict_calibration=sure)).report
    assert report.conflict.probability == 0.5
    assert report.conflict.detected and report.conflict.state == "conflict"
    agreeing = Case(id="made-up-agreeing", question=QUESTION,
                    documents=[Document(id="d0", text=CURRENT), Document(id="d1", text=AGREES)])
    report = analyze_inputs(agreeing, real_embedder, replace(settings, conflict_calibration=sure)).report
    assert not report.conflict.detected and report.conflict.state == "none"
