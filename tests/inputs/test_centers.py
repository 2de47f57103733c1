import numpy as np

from diagnose.inputs.centers import group_documents, keep_one_lone, masses, similarity_pairs, without_answerless


def _unit(rows):
    x = np.asarray(rows, dtype=np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_similarity_pairs_match_brute_force():
    rng = np.random.default_rng(0)
    emb = _unit(rng.standard_normal((12, 8)))
    sims = emb @ emb.T
    expected = {(i, j) for i in range(12) for j in range(i + 1, 12) if sims[i, j] >= 0.2}
    got = similarity_pairs(emb, 0.2)
    assert {(i, j) for i, j, _ in got} == expected
    for i, j, s in got:
        assert abs(s - sims[i, j]) < 1e-5


def test_documents_with_one_key_share_a_center_and_keyless_ones_attach():
    emb = _unit([[1, 0, 0], [0.9, 0.1, 0], [0, 1, 0], [0.95, 0.05, 0], [0, 0, 1]])
    keys = ["k1", "k1", "k2", None, None]
    got = group_documents(emb, keys, np.zeros(5, bool), set(), attach_similarity=0.5, center_similarity=0.75)
    assert got[0] == got[1] == got[3] == 0  # the largest center comes first
    assert got[2] == 1
    assert got[4] == 2  # keyless and like nothing: a center of its own


def test_different_keys_never_merge_however_similar():
    emb = _unit([[1, 0], [1, 0.001], [0.999, 0.002]])
    got = group_documents(emb, ["a", "b", None], np.zeros(3, bool), set(), 0.5, 0.75)
    assert got[0] != got[1]
    assert got[2] in (got[0], got[1])


def test_cannot_link_keeps_near_identical_keyless_documents_apart():
    emb = _unit([[1, 0], [1, 0.001], [0.999, 0.002]])
    got = group_documents(emb, [None, None, None], np.zeros(3, bool), {(0, 1)}, 0.5, 0.75)
    assert got[0] != got[1]
    assert len({g for g in got}) == 2
    # A third document that is like both joins one side only, never bridging the blocked pair.
    assert got[2] in (got[0], got[1])


def test_every_non_noise_doc_in_exactly_one_center_and_masses_sum_to_one():
    rng = np.random.default_rng(1)
    emb = _unit(rng.standard_normal((9, 6)))
    keys = ["a", "b", None, "a", None, "c", "b", None, "a"]
    noise = np.array([False, False, False, False, True, False, False, False, True])
    got = group_documents(emb, keys, noise, set(), attach_similarity=-1.0, center_similarity=0.75)
    assert [i for i, c in enumerate(got) if c is None] == [4, 8]
    m = masses(got)
    assert abs(m.sum() - 1.0) < 1e-9
    assert len(m) == len({c for c in got if c is not None})
    assert list(m) == sorted(m, reverse=True)


def test_without_any_answer_documents_group_by_embedding():
    emb = _unit([[1, 0], [0.99, 0.01], [0, 1]])
    got = group_documents(emb, [None, None, None], np.zeros(3, bool), set(), 0.5, 0.9)
    assert got[0] == got[1] != got[2]


def test_masses_are_weighted():
    m = masses([0, 0, 1, None], weights=np.array([1.0, 1.0, 2.0, 5.0]))
    np.testing.assert_allclose(m, [0.5, 0.5])


def test_of_the_centers_resting_on_one_unbacked_document_only_the_strongest_stays():
    # centers: 0 = documents 0 and 1; 1, 2, 3 = one document each; document 4 answers with a backed value
    assignment = [0, 0, 1, 2, 3]
    lone = [False, False, True, True, False]
    kept = keep_one_lone(assignment, lone, [0.9, 0.9, 0.4, 0.7, 0.5])
    assert kept[2] is None and kept[3] is not None and kept[4] is not None
    assert len({a for a in kept if a is not None}) == 3
    assert keep_one_lone([0, 1], [True, False], [0.1, 0.2]) == [0, 1]  # one such center: it stays


def test_a_center_in_which_no_document_answers_is_noise():
    # centers: 0 = an answer and a page without one; 1 = an answer; 2 = two pages without one
    answered = [True, False, True, False, False, False]
    kept = without_answerless([0, 0, 1, 2, 2, None], answered)
    assert kept == [0, 0, 1, None, None, None]  # the misread page stays with its answer's center
    assert without_answerless([0, 1], [False, False]) == [0, 1]  # nothing answers: the centers stand
    assert without_answerless([0, 1], [False, True]) == [None, 0]  # renumbered from 0
