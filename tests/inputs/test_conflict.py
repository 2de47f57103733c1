
from diagnose.inputs.conflict import FEATURES, STANCE_FEATURES, copy_mismatches, differing_spans, quote, without_stance, word_ratio

A = "As of 2021 the depot at Brackley holds 4,411 pallets and the annex has 12,878."
B = "As of 2021 the depot at Brackley holds 10,000 pallets and the annex has 12,878."


def test_near_copies_yield_the_differing_values():
    assert word_ratio(A, B) > 0.8
    spans = differing_spans(A, B)
    assert spans == [("4,411", "10,000")]
    assert quote(("d1", "d3"), spans) == 'd1: "4,411" vs d3: "10,000"'


def test_a_dated_heading_one_copy_adds_is_no_differing_value():
    assert differing_spans("规则（2031年修订）：最多10天。", "规则：最多5天。") == [("10", "5")]


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


def test_without_stance_zeroes_only_the_stance_features():
    features = {name: 0.5 for name in FEATURES}
    out = without_stance(features)
    assert {k for k, v in out.items() if v == 0.0} == set(STANCE_FEATURES)
    assert features["stance_split"] == 0.5  # a new dict
    assert {"value_split", "copy_mismatch", "spread"}.isdisjoint(STANCE_FEATURES)
    assert not any("doc" in name for name in FEATURES)
