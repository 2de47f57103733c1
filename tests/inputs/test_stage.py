import numpy as np
import pytest

from diagnose.case import Case, Document
from diagnose.inputs import InputAnalysis, analyze_inputs
from diagnose.inputs.settings import InputSettings

S = InputSettings()
BRYAN_A = ("Blackshear M. Bryan Lieutenant General Blackshear Morrison Bryan (July 15, 1905 – "
           "March 2, 1977) was a United States Army general who served during the Second World War.")
BRYAN_B = BRYAN_A.replace("July 15, 1905", "February 8, 1900")
OFF_TOPIC = ("Preheat the oven and whisk the eggs with sugar until pale, then fold in the flour "
             "gently and bake the sponge cake for twenty minutes.")


def _case(question, *texts, **kw):
    return Case(id="t", question=question,
                documents=[Document(id=f"d{i}", text=t) for i, t in enumerate(texts)], **kw)


def _check_contract(analysis: InputAnalysis, case: Case):
    rep = analysis.report
    in_centers = [d for c in rep.gravity_centers for d in c.documents]
    assert len(in_centers) == len(set(in_centers))
    assert set(in_centers).isdisjoint(rep.noise_documents)
    assert sorted(in_centers + rep.noise_documents) == sorted(d.id for d in case.documents)
    if rep.gravity_centers:
        assert abs(sum(c.mass for c in rep.gravity_centers) - 1.0) < 1e-4
    assert 0.0 <= rep.conflict.score <= 1.0
    assert rep.conflict.detected == (rep.conflict.score >= S.conflict_threshold)
    assert [v.id for v in rep.documents] == [d.id for d in case.documents]
    n = len(case.documents)
    assert analysis.doc_embeddings.shape[0] == n and analysis.doc_embeddings.dtype == np.float32
    assert set(analysis.center_answers) == {c.id for c in rep.gravity_centers}


def test_stage_with_a_fake_embedder_is_consistent_and_deterministic(hash_embedder):
    case = _case("When was General Bryan born?", BRYAN_A, BRYAN_B, BRYAN_A.replace("July", "July "))
    first = analyze_inputs(case, hash_embedder, S, count_tokens=lambda t: len(t.split()))
    second = analyze_inputs(case, hash_embedder, S, count_tokens=lambda t: len(t.split()))
    _check_contract(first, case)
    assert first.report == second.report
    assert first.report.documents[0].tokens == len(BRYAN_A.split())
    assert first.center_answers["c1"] == ["1905", "july 15 1905"]


def test_empty_case(hash_embedder):
    case = _case("When was General Bryan born?")
    analysis = analyze_inputs(case, hash_embedder, S)
    assert analysis.report.gravity_centers == [] and not analysis.report.conflict.detected


def test_instruction_conflicts_and_prompt_facts(hash_embedder):
    case = _case("When was General Bryan born?", BRYAN_A, system="Be brief.",
                 template="Explain in detail. {documents} {question}")
    prompt = f"Explain in detail. {BRYAN_A} When was General Bryan born?"
    rep = analyze_inputs(case, hash_embedder, S, count_tokens=lambda t: len(t.split()),
                         prompt=prompt, context_window=4096).report
    assert rep.instruction_conflicts == [["Be brief", "Explain in detail"]]
    assert rep.prompt_tokens == len(prompt.split()) and rep.context_window == 4096
    assert 0.0 < rep.strongest_center_position < 1.0


@pytest.mark.models
def test_two_years_conflict_with_value_mismatch_evidence(real_embedder):
    case = _case("When was General Bryan born?", BRYAN_A, BRYAN_B)
    analysis = analyze_inputs(case, real_embedder, S)
    _check_contract(analysis, case)
    rep = analysis.report
    assert len(rep.gravity_centers) == 2 and rep.conflict.detected
    pair = rep.conflict.pairs[0]
    assert pair.kind == "value_mismatch"
    assert "1905" in pair.evidence and "1900" in pair.evidence
    assert {v.answer for v in rep.documents} == {"July 15, 1905", "February 8, 1900"}


@pytest.mark.models
def test_off_topic_document_is_noise(real_embedder):
    case = _case("When was General Bryan born?", BRYAN_A, OFF_TOPIC)
    rep = analyze_inputs(case, real_embedder, S).report
    assert rep.noise_documents == ["d1"]
    assert [c.documents for c in rep.gravity_centers] == [["d0"]]


@pytest.mark.models
def test_clean_case_has_one_center_and_no_conflict(real_embedder):
    other = ("General Blackshear M. Bryan was born on July 15, 1905 in Alexandria, Louisiana, "
             "and graduated from West Point in 1927.")
    case = _case("When was General Bryan born?", BRYAN_A, other)
    analysis = analyze_inputs(case, real_embedder, S)
    _check_contract(analysis, case)
    rep = analysis.report
    assert len(rep.gravity_centers) == 1 and rep.gravity_centers[0].mass == 1.0
    assert not rep.conflict.detected and rep.conflict.pairs == []
    assert rep.gravity_centers[0].label == "July 15, 1905"


@pytest.mark.models
def test_chinese_case_works(real_embedder):
    a = "北京市是中国的首都。根据2020年人口普查，北京市常住人口为21893095人。"
    b = "北京市是中国的首都。根据2020年人口普查，北京市常住人口为31893095人。"
    case = _case("北京的人口是多少？", a, b)
    analysis = analyze_inputs(case, real_embedder, S)
    _check_contract(analysis, case)
    rep = analysis.report
    assert {v.answer for v in rep.documents} == {"21893095", "31893095"}
    assert rep.conflict.detected
    pair = rep.conflict.pairs[0]
    assert pair.kind == "value_mismatch"
    assert pair.evidence in ('d0: "21893095" vs d1: "31893095"', 'd1: "31893095" vs d0: "21893095"')


@pytest.mark.models
def test_chinese_fixture_two_heights_conflict_and_off_topic_noise(real_embedder):
    from pathlib import Path

    from diagnose.case_file import load_case

    case = load_case(Path(__file__).resolve().parents[2] / "fixtures" / "cases" / "chinese-language.yaml")
    analysis = analyze_inputs(case, real_embedder, S)
    _check_contract(analysis, case)
    rep = analysis.report
    assert sorted(c.documents for c in rep.gravity_centers) == [["d1"], ["d2"]]
    assert {c.label for c in rep.gravity_centers} == {"8848.86", "8611"}
    assert rep.noise_documents == ["d3"]
    assert rep.conflict.detected
    pair = rep.conflict.pairs[0]
    assert pair.kind == "value_mismatch"
    assert "8848.86" in pair.evidence and "8611" in pair.evidence
    assert {v.id: v.answer for v in rep.documents} == {"d1": "8848.86", "d2": "8611", "d3": None}


def test_weak_unique_answers_do_not_count_for_noise():
    from diagnose.inputs.answers import Answer
    from diagnose.inputs.stage import answer_evidence

    found = [Answer("golf", "golf", 1.0), Answer("golf", "golf", 1.0), Answer("tennis", "tennis", 1.0),
             Answer("Jay-Z", "jay z", 3.0), None]
    answered, backed = answer_evidence(found, S.weak_answer)
    assert backed.tolist() == [True, True, False, False, False]
    assert answered.tolist() == [True, True, False, True, False]
