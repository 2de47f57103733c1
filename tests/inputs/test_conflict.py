import numpy as np

from diagnose.inputs.conflict import conflict_score, differing_spans, pair_evidence, quote, word_ratio

A = "As of 2006 the population of Pilzno amounts to 4,411 and the rural part has 12,878."
B = "As of 2006 the population of Pilzno amounts to 10,000 and the rural part has 12,878."


def test_near_copies_yield_the_differing_values():
    assert word_ratio(A, B) > 0.8
    spans = differing_spans(A, B)
    assert spans == [("4,411", "10,000")]
    assert quote(("d1", "d3"), spans) == 'd1: "4,411" vs d3: "10,000"'


def test_wording_changes_without_values_are_not_evidence():
    assert differing_spans("the town is small and quiet", "the town is tiny and quiet") == []


def test_pair_evidence_kinds():
    texts = [A, B, "Pilzno is also the name of a river in a different country."]
    emb = np.eye(3, dtype=np.float32)
    pairs = pair_evidence(texts, emb, [0, 1, 2], ["4,411", "10,000", "river"], 0.6, 0.75)
    assert [(p.a, p.b, p.kind) for p in pairs] == [
        (0, 1, "value_mismatch"), (0, 2, "entity_ambiguity"), (1, 2, "entity_ambiguity")
    ]
    assert pairs[0].spans == (("4,411", "10,000"),)


def test_conflict_score_bounds_and_order():
    clean_consensus = conflict_score([2], [True], 0, n_docs=2, confirming=2)
    weak_consensus = conflict_score([1], [True], 0, n_docs=4, confirming=1)
    unanswered_split = conflict_score([1, 1], [False, False], 0, n_docs=4, confirming=0)
    lone_answers = conflict_score([1, 1], [True, True], 0, n_docs=2, confirming=0)
    corroborated = conflict_score([2, 1], [True, True], 0, n_docs=3, confirming=0)
    quoted = conflict_score([2, 2], [True, True], 1, n_docs=4, confirming=0)
    assert clean_consensus == 0.0
    assert 0.0 < weak_consensus < 0.5 <= lone_answers < corroborated < quoted <= 1.0
    assert weak_consensus < unanswered_split < 0.5


def test_unconfirmed_documents_raise_a_single_center_score():
    scores = [conflict_score([1], [True], 0, n_docs=n, confirming=1) for n in (1, 2, 4, 8)]
    assert scores == sorted(scores) and scores[0] == 0.0 and scores[-1] < 0.6


def test_cjk_text_aligns_per_character():
    a = "北京市常住人口为21893095人。"
    b = "北京市常住人口为31893095人。"
    assert differing_spans(a, b) == [("21893095", "31893095")]
