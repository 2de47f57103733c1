"""Candidate generation from hand-made findings: one change each, in the order they are tried."""

from __future__ import annotations

import pytest

from diagnose.case import Case, Document, RegexConstraint, SamplingSpec
from diagnose.report import Conflict, ConflictPair, DocumentView, Finding, GravityCenter, InputReport
from diagnose.repair import propose
from diagnose.repair.case_text import case_diff
from diagnose.repair.language import disagreement_instruction, question_language
from diagnose.triage import TriageThresholds


def _case(**extra) -> Case:
    fields = dict(
        id="c", question="When did the bridge open?", system="Answer briefly.",
        documents=[Document(id=f"d{i}", text=f"text {i}") for i in range(1, 6)],
        sampling=SamplingSpec(seeds=4, temperatures=[0.2, 0.7], top_k=50, top_p=0.9, max_new_tokens=256),
    )
    fields.update(extra)
    return Case(**fields)


def _inputs() -> InputReport:
    return InputReport(
        gravity_centers=[GravityCenter(id="c1", documents=["d2", "d3"], mass=0.5, label="1937"),
                         GravityCenter(id="c2", documents=["d1"], mass=0.25, label="1952"),
                         GravityCenter(id="c3", documents=["d4"], mass=0.25, label="1961")],
        noise_documents=["d5"],
        conflict=Conflict(detected=True, score=0.8, pairs=[ConflictPair(a="d1", b="d2", kind="value_mismatch",
                                                                         evidence="1952 vs 1937")]),
        documents=[DocumentView(id=f"d{i}", center=None, relevance=0.5, tokens=2, position=[0.0, 0.0])
                   for i in range(1, 6)],
    )


def _finding(rule: str, severity: str = "warn", **evidence) -> Finding:
    return Finding(stage=rule.split(".")[0], rule=rule, severity=severity, evidence=evidence, advice="...")


def _ids(candidates) -> list[str]:
    return [c.id for c in candidates]


def test_competing_centers_remove_each_minority_center_keep_the_dominant_and_ask_to_report_disagreement():
    found = propose(_case(), _inputs(), None, [_finding("input.competing_centers")], TriageThresholds())
    assert _ids(found) == ["remove_center:c2", "remove_center:c3", "keep_center:c1", "disagreement_instruction"]
    remove = found[0]
    assert [d.id for d in remove.case.documents] == ["d2", "d3", "d4", "d5"]
    assert remove.change == {"kind": "remove_center", "center": "c2", "label": "1952", "removed": ["d1"]}
    keep = found[2]
    assert [d.id for d in keep.case.documents] == ["d2", "d3"]
    assert keep.change["removed"] == ["d1", "d4", "d5"] and keep.removes_documents
    instruction = found[3]
    assert instruction.case.system == "Answer briefly. If the documents disagree, say so and give each answer with its source."
    assert instruction.case.documents == _case().documents and not instruction.removes_documents
    # Only the sampled split can show it resolved; the documents' conflict stays by construction.
    assert instruction.rechecked == () and remove.rechecked == ("input.competing_centers",)
    assert remove.targets == ("center_split", "semantic_entropy")
    # The original is never changed.
    assert [d.id for d in _case().documents] == ["d1", "d2", "d3", "d4", "d5"]


def test_each_candidate_makes_one_change_from_the_original():
    findings = [_finding(r) for r in ("input.competing_centers", "input.noise_share", "length.truncated",
                                      "sampling.determinism_trap", "framework.sampler_portability")]
    original = _case()
    for candidate in propose(original, _inputs(), None, findings, TriageThresholds()):
        changed = [name for name in Case.__struct_fields__ if getattr(candidate.case, name) != getattr(original, name)]
        assert len(changed) == 1, (candidate.id, changed)


def test_ordered_by_severity_then_checklist_order():
    findings = [_finding("input.noise_share", "warn"), _finding("sampling.split_center_pull", "fail"),
                _finding("length.truncated", "fail"), _finding("framework.sampler_portability", "info")]
    found = propose(_case(), _inputs(), None, findings, TriageThresholds())
    assert _ids(found) == ["remove_center:c2", "remove_center:c3", "keep_center:c1", "disagreement_instruction",
                           "max_new_tokens", "drop_noise", "pin_parameters"]
    assert [c.severity for c in found] == ["fail"] * 5 + ["warn", "info"]


def test_sampling_length_noise_and_framework_candidates():
    findings = [_finding("sampling.determinism_trap", "info"), _finding("length.truncated"),
                _finding("input.noise_share"), _finding("framework.sampler_portability")]
    found = {c.id: c for c in propose(_case(), _inputs(), None, findings, TriageThresholds())}
    assert set(found) == {"temperature", "max_new_tokens", "drop_noise", "pin_parameters"}
    temperature = found["temperature"]
    assert temperature.case.sampling.temperatures == [0.7]  # 0.2 is raised onto the existing 0.7
    assert temperature.sampled_temperatures([0.2, 0.7]) == []  # ... whose samples are the original's
    assert temperature.compared_temperatures([0.2, 0.7]) == [(0.2, 0.7)]
    assert found["max_new_tokens"].case.sampling.max_new_tokens == 512
    assert [d.id for d in found["drop_noise"].case.documents] == ["d1", "d2", "d3", "d4"]
    pinned = found["pin_parameters"].case.sampling
    assert (pinned.top_k, pinned.repetition_penalty, pinned.top_p) == (0, 1.0, 0.9)
    assert found["pin_parameters"].change == {"kind": "pin_parameters", "from": {"top_k": 50}, "to": {"top_k": 0}}


def test_loops_raise_the_looping_temperature_lower_top_p_or_add_a_mild_penalty():
    case = _case(sampling=SamplingSpec(seeds=4, temperatures=[0.5, 1.0], top_p=1.0, top_k=0))
    found = {c.id: c for c in propose(case, _inputs(), None,
                                      [_finding("sampling.strong_pull", repetition_rate={"0.5": 0.4})],
                                      TriageThresholds())}
    assert set(found) == {"temperature", "top_p", "repetition_penalty"}
    assert found["temperature"].case.sampling.temperatures == [0.8, 1.0]
    assert found["temperature"].sampled_temperatures([0.5, 1.0]) == [0.8]
    assert found["top_p"].case.sampling.top_p == 0.9
    assert found["repetition_penalty"].case.sampling.repetition_penalty == 1.1
    assert all(c.targets == ("repetition_rate",) and c.guards == ("semantic_entropy",) for c in found.values())


def test_lost_in_the_middle_moves_the_strongest_center_to_either_end():
    found = {c.id: c for c in propose(_case(), _inputs(), None, [_finding("input.lost_in_the_middle", "info")],
                                      TriageThresholds())}
    assert [d.id for d in found["move_center:start"].case.documents] == ["d2", "d3", "d1", "d4", "d5"]
    assert [d.id for d in found["move_center:end"].case.documents] == ["d1", "d4", "d5", "d2", "d3"]


def test_no_finding_no_candidate_and_constraints_add_a_compliance_guard():
    assert propose(_case(), _inputs(), None, [], TriageThresholds()) == []
    case = _case(constraints=[RegexConstraint(pattern=r"\d")])
    found = propose(case, _inputs(), None, [_finding("length.truncated")], TriageThresholds())
    assert found[0].guards == ("compliance_rate",)


@pytest.mark.parametrize(("question", "language"), [
    ("When did the bridge open?", "en"),
    ("Quand le pont a-t-il été ouvert à la circulation ?", "fr"),
    ("金门大桥是哪一年通车的？", "zh"),
    ("金門橋はいつ開通しましたか？", "ja"),
    ("Wann wurde die Brücke eröffnet?", "en"),  # another language: the English fallback
])
def test_the_instruction_is_written_in_the_questions_language(question: str, language: str):
    assert question_language(question) == language
    sentence = disagreement_instruction(question)
    case = _case(question=question, system=None)
    instruction = next(c for c in propose(case, _inputs(), None, [_finding("input.competing_centers")],
                                          TriageThresholds()) if c.id == "disagreement_instruction")
    assert instruction.case.system == sentence and instruction.change["language"] == language


def test_the_diff_shows_exactly_the_change():
    original = _case()
    removed = propose(original, _inputs(), None, [_finding("input.competing_centers")], TriageThresholds())[0]
    diff = case_diff(original, removed.case, removed.id)
    assert diff.startswith("--- c.yaml\n+++ c.yaml (remove_center:c2)\n")
    changed = [line for line in diff.splitlines()[2:] if line[:1] in "+-"]
    assert changed == ["-- id: d1", "-  text: text 1"]
    assert case_diff(original, original, "none") == ""


def _marked_case(**marks: dict) -> Case:
    """The standard case with ``authority``/``date`` marks on some documents (by id)."""
    docs = [Document(id=d.id, text=d.text, **marks.get(d.id, {})) for d in _case().documents]
    return _case(documents=docs)


def test_the_authoritative_center_is_kept_and_dropping_it_comes_last_and_says_so():
    import datetime

    case = _marked_case(d1={"authority": "authoritative", "date": datetime.date(2025, 3, 1)},
                        d2={"authority": "archived", "date": datetime.date(2019, 1, 1)})
    found = propose(case, _inputs(), None, [_finding("input.competing_centers")], TriageThresholds())
    order = _ids(found)
    dropping = [c.id for c in found if c.drops_authoritative]
    assert set(dropping) == {"remove_center:c2", "keep_center:c1"}
    assert order[-len(dropping):] == dropping  # tried last
    assert order.index("keep_center:c2") < order.index("keep_center:c1")
    note = next(c for c in found if c.id == "remove_center:c2").change["drops_authoritative"]
    assert note == {"center": "c2", "label": "1952", "documents": {"d1": {"authority": "authoritative",
                                                                         "date": "2025-03-01"}}}
    assert "drops_authoritative" not in next(c for c in found if c.id == "remove_center:c1").change


def test_a_newer_date_alone_makes_a_center_current_and_equal_marks_prefer_nothing():
    import datetime

    newer = _marked_case(d4={"date": datetime.date(2026, 1, 1)}, d2={"date": datetime.date(2020, 1, 1)})
    found = propose(newer, _inputs(), None, [_finding("input.competing_centers")], TriageThresholds())
    assert [c.id for c in found if c.change["kind"] == "keep_center"][0] == "keep_center:c3"
    tied = _marked_case(d1={"authority": "authoritative"}, d2={"authority": "authoritative"},
                        d4={"authority": "authoritative"})
    plain = propose(_case(), _inputs(), None, [_finding("input.competing_centers")], TriageThresholds())
    same = propose(tied, _inputs(), None, [_finding("input.competing_centers")], TriageThresholds())
    assert _ids(same) == _ids(plain) and not any(c.drops_authoritative for c in same)


def test_document_marks_are_validated_naming_the_field():
    from diagnose.case import case_from_dict
    from diagnose.errors import CaseError

    base = {"id": "c", "question": "q?", "documents": [{"id": "a", "text": "t"}]}
    for field, value in (("date", "last spring"), ("authority", "very")):
        bad = {**base, "documents": [{"id": "a", "text": "t", field: value}]}
        with pytest.raises(CaseError, match=rf"documents\[0\]\.{field}"):
            case_from_dict(bad)
    ok = case_from_dict({**base, "documents": [{"id": "a", "text": "t", "date": "2025-03-01",
                                                "authority": "archived"}]})
    assert str(ok.documents[0].date) == "2025-03-01" and ok.documents[0].authority == "archived"
