import numpy as np

from diagnose.inputs.conflict import FEATURES, conflict_score, copy_mismatches, differing_spans, quote, word_ratio

A = "As of 2021 the depot at Brackley holds 4,411 pallets and the annex has 12,878."
B = "As of 2021 the depot at Brackley holds 10,000 pallets and the annex has 12,878."


def test_near_copies_yield_the_differing_values():
    assert word_ratio(A, B) > 0.8
    spans = differing_spans(A, B)
    assert spans == [("4,411", "10,000")]
    assert quote(("d1", "d3"), spans) == 'd1: "4,411" vs d3: "10,000"'


def test_wording_changes_without_values_are_not_evidence():
    assert differing_spans("the town is small and quiet", "the town is tiny and quiet") == []


def test_copy_mismatches_count_only_changes_inside_a_claim():
    claim_a = [(0, len(A))]
    found = copy_mismatches([A, B], [claim_a, [(0, len(B))]], 0.6, [True, True])
    assert [(p.a, p.b, p.kind, p.spans) for p in found] == [(0, 1, "value_mismatch", (("4,411", "10,000"),))]
    # The change lies outside both documents' claims (a different fact): no evidence.
    assert copy_mismatches([A, B], [[(0, 10)], [(0, 10)]], 0.6, [True, True]) == []
    # A noise document takes no part.
    assert copy_mismatches([A, B], [claim_a, claim_a], 0.6, [True, False]) == []


WEIGHTS = (("bias", -2.0), ("value_split", 4.5), ("spread", 1.0), ("copy_mismatch", 2.5))


def _features(**kw):
    return {name: 0.0 for name in FEATURES} | kw


def test_conflict_score_is_the_logistic_of_the_weighted_features():
    import math

    assert abs(conflict_score(_features(), WEIGHTS) - 1 / (1 + math.exp(2.0))) < 1e-12
    z = -2.0 + 4.5 * 0.6 + 1.0 * 0.3
    assert abs(conflict_score(_features(value_split=0.6, spread=0.3, camp_gap=0.9), WEIGHTS) - 1 / (1 + math.exp(-z))) < 1e-12


def test_conflict_score_grows_with_evidence_and_never_reads_the_document_count():
    agree = conflict_score(_features(spread=0.2), WEIGHTS)
    split = conflict_score(_features(value_split=0.5, spread=0.2), WEIGHTS)
    copied = conflict_score(_features(value_split=0.5, copy_mismatch=1.0, spread=0.2), WEIGHTS)
    assert 0.0 < agree < 0.5 < split < copied < 1.0
    assert not any("doc" in name for name in FEATURES)


def test_the_default_weights_name_only_known_features():
    from diagnose.inputs.settings import InputSettings

    assert {name for name, _ in InputSettings().conflict_weights} <= set(FEATURES) | {"bias"}


def test_cjk_text_aligns_per_character():
    a = "北京市常住人口为21893095人。"
    b = "北京市常住人口为31893095人。"
    assert differing_spans(a, b) == [("21893095", "31893095")]
